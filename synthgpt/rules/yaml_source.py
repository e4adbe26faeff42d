"""YAML rule files: their data, with the position of every key and value (`locations.parse_source`).

A module of its own so that PyYAML is loaded with the first YAML file, not by every server: one serving
the built-in rules never reads YAML.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from ..errors import RuleFileError
from .locations import MAX_DEPTH, MAX_YAML_VALUES, NodePath, Pos, SourceMap

__all__ = ["parse_yaml"]


class _Scalars(SafeConstructor):
    """Turns a scalar node into its Python value, with YAML's safe tag rules, except that dates and
    times stay the text they were written as: answers are JSON, where a date is a string."""


# (the stubs type add_constructor for Loader classes only; a constructor subclass is what it needs)
_Scalars.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)  # type: ignore[type-var]


_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"


_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", None)
"""libyaml's parser, when PyYAML was built with it: the pure-Python one takes ~1 ms per rule, so a file of
20,000 rules took half a minute to parse. libyaml bounds nesting (1,000 levels) instead of recursing."""


def _compose(text: str) -> yaml.Node | None:
    if _FAST_LOADER is not None:
        try:
            return yaml.compose(text, Loader=_FAST_LOADER)
        except Exception:  # parsed again below, for PyYAML's own wording of the error
            pass
    return yaml.compose(text, Loader=yaml.SafeLoader)


def parse_yaml(text: str, smap: SourceMap) -> Any:
    try:
        node = _compose(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise RuleFileError(smap.path, line, col, f"invalid YAML: {problem}") from None
    except yaml.reader.ReaderError as exc:  # a character YAML refuses: located by its index in the text
        line = text.count("\n", 0, exc.position) + 1
        col = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        char = f"#x{exc.character:04x}" if isinstance(exc.character, int) else repr(exc.character)
        message = f"invalid YAML: unacceptable character {char}: {exc.reason}"
        raise RuleFileError(smap.path, line, col, message) from None
    except yaml.YAMLError as exc:  # pragma: no cover - every other YAML error carries a mark
        raise RuleFileError(smap.path, 1, 1, f"invalid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:  # PyYAML's parser recurses once per level of nesting
        line, col = _too_deep(text)
        raise RuleFileError(smap.path, line, col, f"nesting deeper than {MAX_DEPTH} levels") from None
    if node is None:
        return None
    return _YamlWalker(smap).value(node, ())


def _shown(node: yaml.Node) -> str:
    text = str(node.value)
    return f"{len(text)} characters" if len(text) > 40 else repr(text)


_OPENS = (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken, yaml.BlockSequenceStartToken,
          yaml.BlockMappingStartToken)
_CLOSES = (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken, yaml.BlockEndToken)


def _too_deep(text: str) -> Pos:
    """Where the nesting of `text` first goes past MAX_DEPTH, found with PyYAML's scanner (a loop, unlike
    its parser); the start of the file if the scanner stops first."""
    depth = 0
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, _OPENS):
                depth += 1
                if depth > MAX_DEPTH:
                    return token.start_mark.line + 1, token.start_mark.column + 1
            elif isinstance(token, _CLOSES):
                depth -= 1
    except yaml.YAMLError:
        pass
    return 1, 1


class _YamlWalker:
    def __init__(self, smap: SourceMap) -> None:
        self.smap = smap
        self.scalars = _Scalars()
        self.depth = 0
        self.built = 0

    def value(self, node: yaml.Node, path: NodePath) -> Any:
        self.smap.values[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        # aliases repeat what they name: a few lines of anchors can stand for billions of values
        self.built += 1
        if self.built > MAX_YAML_VALUES:
            mark = node.start_mark
            raise RuleFileError(self.smap.path, mark.line + 1, mark.column + 1,
                                f"the file expands to more than {MAX_YAML_VALUES} values (each use of a "
                                "YAML alias `*name` repeats all it names); use fewer or smaller aliases")
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return self.nested(lambda: [self.value(n, (*path, i)) for i, n in enumerate(node.value)], node)
        return self.scalar(node, path)

    def scalar(self, node: yaml.Node, path: NodePath) -> Any:
        if node.tag == _STR_TAG and isinstance(node, yaml.ScalarNode):
            return node.value  # what the constructor would give, without its generic path (most scalars)
        try:
            return self.scalars.construct_object(node)
        except yaml.constructor.ConstructorError as exc:
            raise self.smap.error(path, f"invalid YAML value: {exc.problem}") from None
        except (ValueError, OverflowError):  # an integer of more digits than Python converts
            message = f"invalid YAML value: a number too long to read ({_shown(node)})"
            raise self.smap.error(path, message) from None

    def nested(self, build: Any, node: yaml.Node) -> Any:
        # aliases make any graph expressible; a self-referencing anchor would recurse for ever
        self.depth += 1
        if self.depth > MAX_DEPTH:
            mark = node.start_mark
            line, col = mark.line + 1, mark.column + 1
            raise RuleFileError(self.smap.path, line, col, f"nesting deeper than {MAX_DEPTH} levels")
        try:
            return build()
        finally:
            self.depth -= 1

    def mapping(self, node: yaml.MappingNode, path: NodePath) -> dict[Any, Any]:
        def build() -> dict[Any, Any]:
            out: dict[Any, Any] = {}
            explicit: set[Any] = set()
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:  # `<<: *defaults`: explicit keys win over merged ones
                    sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                    for src in sources:
                        if not isinstance(src, yaml.MappingNode):
                            raise self.smap.error(path, "`<<` merges a mapping or a list of mappings")
                        for k, v in self.mapping(src, path).items():
                            if k not in explicit:
                                out.setdefault(k, v)
                    continue
                if not isinstance(key_node, yaml.ScalarNode):
                    m = key_node.start_mark
                    raise RuleFileError(self.smap.path, m.line + 1, m.column + 1, "keys must be plain values")
                key = self.scalar(key_node, (*path, len(out)))
                if isinstance(key, list | dict):  # pragma: no cover - scalar nodes never construct these
                    key = str(key)
                kpos = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                if key in explicit:
                    raise RuleFileError(self.smap.path, *kpos, f"duplicate key {key!r}")
                explicit.add(key)
                self.smap.keys[(*path, key)] = kpos
                out[key] = self.value(value_node, (*path, key))
            return out

        result: dict[Any, Any] = self.nested(build, node)
        return result
