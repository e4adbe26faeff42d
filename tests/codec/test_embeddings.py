"""Embeddings (WIRE.md §5): the generator's vectors and the wire format, in process."""

from __future__ import annotations

import base64
import math
import struct
from typing import Any

import pytest
from syrupy.extensions.json import JSONSnapshotExtension

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.codec.embeddings import EmbeddingsCodec, MissingEmbeddings, encode_vector
from synthgpt.errors import DrawError, RequestError, RuleError
from synthgpt.generators.embedding import Embeddings, EmbeddingVectors, embed_text, native_dimensions
from synthgpt.model import ModelOutput, ModelRequest

DOCS = [
    "How to reset your password: open settings and choose reset password.",
    "Quarterly revenue grew by ten percent thanks to strong sales.",
    "The cat sat on the warm mat by the fire.",
    "Our office is closed on public holidays.",
]


def cosine(a: tuple[float, ...] | list[float], b: tuple[float, ...] | list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def run(body: dict[str, Any], seed: int = 0) -> tuple[EmbeddingsCodec, ModelRequest, ModelOutput]:
    codec = EmbeddingsCodec()
    request = codec.decode(body, {}, {})
    mock = MockGPT(seed=seed)  # the built-in rules answer embeddings requests first
    return codec, request, mock.generate(request)


def floats(entry: dict[str, Any]) -> list[float]:
    value = entry["embedding"]
    if isinstance(value, str):
        raw = base64.b64decode(value)
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    return list(value)


# ---------------------------------------------------------------------------------------------- generator


def test_vectors_are_unit_norm_float32_and_deterministic() -> None:
    v = embed_text("hello world", model="text-embedding-3-small", seed=3)
    assert len(v) == 1536
    assert math.isclose(math.fsum(x * x for x in v), 1.0, abs_tol=1e-6)
    assert all(struct.unpack("<f", struct.pack("<f", x))[0] == x for x in v)  # exactly float32 values
    assert v == embed_text("hello world", model="text-embedding-3-small", seed=3)
    assert v[:3] == (0.00044839445035904646, -0.00064707116689533, 0.017341293394565582)  # pinned


def test_vectors_depend_on_text_model_dimensions_and_seed_only() -> None:
    base = embed_text("hello world", model="text-embedding-3-small", seed=0)
    assert embed_text("hello world", model="text-embedding-3-small", seed=1) != base
    assert embed_text("hello world", model="text-embedding-3-large", seed=0) != base[:1536]
    assert embed_text("hello there", model="text-embedding-3-small", seed=0) != base
    assert native_dimensions("text-embedding-3-large") == 3072
    assert len(embed_text("x", model="text-embedding-3-large")) == 3072


def test_shortened_vectors_are_the_renormalised_start_of_the_full_one() -> None:
    full = embed_text("the shape of things", model="text-embedding-3-small")
    short = embed_text("the shape of things", model="text-embedding-3-small", dimensions=256)
    norm = math.sqrt(math.fsum(x * x for x in full[:256]))
    assert all(
        math.isclose(s, f / norm, rel_tol=1e-5, abs_tol=1e-7) for s, f in zip(short, full[:256], strict=True)
    )


def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    def vec(text: str) -> tuple[float, ...]:
        return embed_text(text, model="text-embedding-3-small")

    query = vec("I forgot my password, how can I reset it?")
    ranked = sorted(DOCS, key=lambda d: -cosine(query, vec(d)))
    assert ranked[0] == DOCS[0]
    assert cosine(vec("The cat sat on the mat"), vec("A cat is sitting on a mat")) > 0.5
    assert abs(cosine(vec("The cat sat on the mat"), vec("Quarterly revenue grew"))) < 0.15
    # trigrams make spelling variants close too
    assert cosine(vec("colour"), vec("color")) > cosine(vec("colour"), vec("banana"))


def test_punctuation_only_text_still_gets_a_vector() -> None:
    v = embed_text("?!", model="m", dimensions=8)
    assert math.isclose(math.fsum(x * x for x in v), 1.0, abs_tol=1e-6)
    assert v != embed_text("...", model="m", dimensions=8)


def test_generator_draws_one_vector_per_input() -> None:
    mock = MockGPT(seed=5, rules=[Rule("e", m.api("embeddings"), Embeddings(dimensions=8))])
    out = mock.generate(ModelRequest(api="embeddings", model="m", inputs=("a", "b")))
    assert out.embeddings == (
        embed_text("a", model="m", dimensions=8, seed=5),
        embed_text("b", model="m", dimensions=8, seed=5),
    )
    assert (out.usage.prompt_tokens, out.usage.completion_tokens) == (2, 0)
    assert (
        repr(Embeddings(dimensions=8)) == "embeddings(dimensions=8)" and repr(Embeddings()) == "embeddings()"
    )
    with pytest.raises(RuleError, match="dimensions must be between 1 and 16384"):
        Embeddings(dimensions=0)
    value = Embeddings(dimensions=4).example(
        request=ModelRequest(model="m", messages=[{"role": "user", "content": "hi"}])
    )
    assert isinstance(value, EmbeddingVectors) and value.vectors == (
        embed_text("hi", model="m", dimensions=4),
    )


# -------------------------------------------------------------------------------------------------- codec


def test_decode_input_forms() -> None:
    codec = EmbeddingsCodec()
    assert codec.decode({"model": "m", "input": "hi"}, {}, {}).inputs == ("hi",)
    assert codec.decode({"model": "m", "input": ["a", "b"]}, {}, {}).inputs == ("a", "b")
    assert codec.decode({"model": "m", "input": [1, 2, 3]}, {}, {}).inputs == ("1 2 3",)
    assert codec.decode({"model": "m", "input": [[1, 2], [3]]}, {}, {}).inputs == ("1 2", "3")
    req = codec.decode(
        {"model": "m", "input": "x", "dimensions": 8, "encoding_format": "base64", "user": "u"},
        {"api-key": "secret", "x-trace": "t"},
        {},
    )
    assert (req.api, req.dimensions, req.extra, req.headers) == (
        "embeddings",
        8,
        {"encoding_format": "base64", "user": "u"},
        (("x-trace", "t"),),
    )


@pytest.mark.parametrize(
    ("body", "message", "param"),
    [
        ({"input": "x"}, "Missing required parameter: 'model'.", "model"),
        ({"model": "m"}, "Missing required parameter: 'input'.", "input"),
        ({"model": "m", "input": ""}, "'$.input' is invalid. Please check the API reference.", "input"),
        (
            {"model": "m", "input": []},
            "'$.input' is invalid: empty array. Expected at least one input.",
            "input",
        ),
        ({"model": "m", "input": ["a", ""]}, "'$.input[1]' is invalid: empty string.", "input[1]"),
        (
            {"model": "m", "input": [["a"]]},
            "Invalid type for 'input[0][0]': expected a non-negative integer token "
            "id, but got a string instead.",
            "input[0][0]",
        ),
        (
            {"model": "m", "input": ["a"] * 2049},
            "'$.input' is invalid: at most 2048 inputs are allowed, got 2049.",
            "input",
        ),
        (
            {"model": "m", "input": "x", "encoding_format": "int8"},
            "Invalid value for 'encoding_format': expected 'float' or 'base64', got 'int8'.",
            "encoding_format",
        ),
        (
            {"model": "m", "input": "x", "dimensions": 0},
            "Invalid 'dimensions': expected a value between 1 and 3072, got 0.",
            "dimensions",
        ),
        (
            {"model": "m", "input": "x", "dimensions": "8"},
            "Invalid type for 'dimensions': expected an integer, but got a string instead.",
            "dimensions",
        ),
        (
            {"model": "text-embedding-ada-002", "input": "x", "dimensions": 8},
            "This model does not support specifying dimensions.",
            "dimensions",
        ),
    ],
)
def test_decode_errors(body: dict[str, Any], message: str, param: str) -> None:
    with pytest.raises(RequestError) as info:
        EmbeddingsCodec().decode(body, {}, {})
    assert (info.value.message, info.value.param) == (message, param)


def test_float_body(openai_spec: Any) -> None:
    codec, req, out = run({"model": "text-embedding-3-small", "input": ["hello", "world"], "dimensions": 4})
    body = codec.body(out, req)
    openai_spec("CreateEmbeddingResponse", body)
    assert body == {
        "object": "list",
        "data": [
            {
                "object": "embedding",
                "index": 0,
                "embedding": list(embed_text("hello", model=req.model, dimensions=4)),
            },
            {
                "object": "embedding",
                "index": 1,
                "embedding": list(embed_text("world", model=req.model, dimensions=4)),
            },
        ],
        "model": "text-embedding-3-small",
        "usage": {"prompt_tokens": 4, "total_tokens": 4},  # "hell" "o", "worl" "d"
    }


def test_base64_carries_the_same_values_and_batches_do_not_matter() -> None:
    texts = ["alpha beta", "gamma", "delta epsilon zeta"]
    codec, req, out = run({"model": "text-embedding-3-small", "input": texts, "encoding_format": "base64"})
    b64 = codec.body(out, req)
    codec, req, out = run({"model": "text-embedding-3-small", "input": texts, "encoding_format": "float"})
    flt = codec.body(out, req)
    assert [floats(e) for e in b64["data"]] == [floats(e) for e in flt["data"]]
    assert all(isinstance(e["embedding"], str) for e in b64["data"])
    base64.b64decode(b64["data"][0]["embedding"], validate=True)  # standard alphabet, padded
    codec, req, out = run({"model": "text-embedding-3-small", "input": "gamma"})
    assert floats(codec.body(out, req)["data"][0]) == floats(flt["data"][1])


def test_encode_vector() -> None:
    assert encode_vector((1.0, -2.5), "base64") == base64.b64encode(struct.pack("<2f", 1.0, -2.5)).decode()
    assert encode_vector((1.0, -2.5), "float") == [1.0, -2.5]


def test_a_rule_without_vectors_is_reported() -> None:
    codec = EmbeddingsCodec()
    req = codec.decode({"model": "m", "input": "x"}, {}, {})
    # the engine says so when drawing, naming the rule (the server answers a 500 with this message)
    with pytest.raises(
        DrawError,
        match=r"^rule 'text' answered an embeddings request without one vector per input \(0 for 1\); "
        "use the `embeddings` generator$",
    ):
        MockGPT(rules=[Rule("text", m.always(), g.just("not vectors"))]).generate(req)
    # and the codec refuses to encode an output that has none, however it was built
    out = ModelOutput(rule="hand-made")
    with pytest.raises(
        MissingEmbeddings, match="rule 'hand-made' answered an embeddings request without one vector"
    ):
        codec.body(out, req)


def test_body_snapshot(snapshot: Any) -> None:
    codec, req, out = run({"model": "text-embedding-3-small", "input": ["hi", [1, 2]], "dimensions": 6})
    assert codec.body(out, req) == snapshot.use_extension(JSONSnapshotExtension)


def test_a_vector_is_a_bag_of_features_pinned_to_exact_values() -> None:
    # Repeated and reordered words give the very same floats: features are summed exactly, as integers.
    long = embed_text("tide pools hold anemones; tide pools hold crabs. " * 50,
                      model="text-embedding-3-small", dimensions=8, seed=5)  # fmt: skip
    assert long == (
        0.5352903008460999, 0.36312440037727356, -0.04517805203795433, 0.49444079399108887,
        0.5519173741340637, 0.08080798387527466, -0.12980473041534424, 0.0842626765370369,
    )  # fmt: skip
    shuffled = embed_text("crabs hold pools tide " * 50 + "anemones hold pools tide " * 50,
                          model="text-embedding-3-small", dimensions=8, seed=5)  # fmt: skip
    assert shuffled == long


def test_float32_rounding_in_bulk_is_struct_s_one_value_at_a_time() -> None:
    """`_to_float32` casts a whole vector in C (`array("f")`); each value must be what `struct`'s `<f`
    packing gives, ties to even and subnormals included."""
    import random

    from synthgpt.generators.embedding import _to_float32

    rng = random.Random(3)
    values = [rng.uniform(-1.0, 1.0) for _ in range(5000)] + [rng.gauss(0, 1e-4) for _ in range(2000)]
    ulp = 2.0**-24  # half a float32 ulp at 1.0: ties between two float32 values
    values += [1.0 + ulp, 1.0 + 3 * ulp, -(1.0 + ulp), 1e-40, -1e-45, 0.0, -0.0, 2.0**-149, 2.0**-150]
    one_by_one = tuple(struct.unpack("<f", struct.pack("<f", x))[0] for x in values)
    bulk = _to_float32(values)
    assert [struct.pack("<d", x) for x in bulk] == [struct.pack("<d", x) for x in one_by_one]


def test_a_direction_s_lanes_are_its_values_plus_32768_in_64_bit_lanes() -> None:
    from array import array

    from synthgpt.generators.embedding import _direction, _lanes

    for dims in (1, 7, 1536):
        direction = _direction(0, "text-embedding-3-small", "w:tide", dims)
        lanes = _lanes(direction, dims).to_bytes(8 * dims, "little")
        assert list(array("Q", lanes)) == [v + 32768 for v in direction]
