from collections.abc import Callable, Mapping, Sequence
from re import Pattern

from .config import JustextParams
from .container import ContainerOptions
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
    unlikely: Sequence[int] | None,
    tag_scores: dict[str, int],
    templated: Sequence[bool] | None = None,
    relaxed: Sequence[ParagraphClass | None] | None = None,
    functional: Sequence[bool] | None = None,
    ad_labels: Pattern[str] | None = None,
    credited: Sequence[ParagraphClass | None] | None = None,
    stated: Mapping[str, int] | None = None,
    furniture: bool = False,
    outside: Sequence[int] | None = None,
    teasers: tuple[Sequence[bool], frozenset[str]] | None = None,
    threads: Callable[[list[str], str, str], bool] | None = None,
) -> tuple[Paragraph, ...]: ...
