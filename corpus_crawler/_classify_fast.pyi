from collections.abc import Callable, Sequence

from .classify import ContainerOptions
from .config import JustextParams
from .model import Paragraph, ParagraphClass

FAST_PARAGRAPHS: bool

def paragraphs(
    segments: Sequence[tuple[str, int, str, str, int]],
    stoplist: frozenset[str],
    params: JustextParams,
    reference: bool,
    flags_of: Callable[[str], tuple[bool, bool, bool]],
) -> tuple[Paragraph, ...]: ...

CONTAINER_FIELDS: frozenset[str]

def container_pass(
    paragraphs: tuple[Paragraph, ...],
    params: JustextParams,
    options: ContainerOptions,
    unlikely: Sequence[bool] | None,
    tag_scores: dict[str, int],
    templated: Sequence[bool] | None = None,
    relaxed: Sequence[ParagraphClass | None] | None = None,
    functional: Sequence[bool] | None = None,
) -> tuple[Paragraph, ...]: ...
