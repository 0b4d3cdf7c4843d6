"""publishArticle (spec §4.4): publish one article with a fixed, policy-checked WP-CLI sequence."""

from wp_agent.publishing.commands import MARKER_META_KEY
from wp_agent.publishing.outcome import PublishErrorCode
from wp_agent.publishing.publisher import ArticlePublisher
from wp_agent.publishing.validation import InputProblem, input_problems, validation_output

__all__ = [
    "MARKER_META_KEY",
    "ArticlePublisher",
    "InputProblem",
    "PublishErrorCode",
    "input_problems",
    "validation_output",
]
