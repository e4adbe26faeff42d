"""What the codec tests share."""

from __future__ import annotations

# the OpenAPI schema of each Responses stream event, by its `type`
EVENT_SCHEMAS = {
    "response.created": "ResponseCreatedEvent",
    "response.in_progress": "ResponseInProgressEvent",
    "response.output_item.added": "ResponseOutputItemAddedEvent",
    "response.output_item.done": "ResponseOutputItemDoneEvent",
    "response.content_part.added": "ResponseContentPartAddedEvent",
    "response.content_part.done": "ResponseContentPartDoneEvent",
    "response.output_text.delta": "ResponseTextDeltaEvent",
    "response.output_text.done": "ResponseTextDoneEvent",
    "response.function_call_arguments.delta": "ResponseFunctionCallArgumentsDeltaEvent",
    "response.function_call_arguments.done": "ResponseFunctionCallArgumentsDoneEvent",
    "response.reasoning_summary_part.added": "ResponseReasoningSummaryPartAddedEvent",
    "response.reasoning_summary_part.done": "ResponseReasoningSummaryPartDoneEvent",
    "response.reasoning_summary_text.delta": "ResponseReasoningSummaryTextDeltaEvent",
    "response.reasoning_summary_text.done": "ResponseReasoningSummaryTextDoneEvent",
    "response.completed": "ResponseCompletedEvent",
    "response.incomplete": "ResponseIncompleteEvent",
    "response.failed": "ResponseFailedEvent",
    "error": "ResponseErrorEvent",
}
