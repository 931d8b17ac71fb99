from collections.abc import Callable, Sequence

from .config import JustextParams
from .model import Paragraph

FAST_PARAGRAPHS: bool

def paragraphs(
    segments: Sequence[tuple[str, int, str, str, int]],
    stoplist: frozenset[str],
    params: JustextParams,
    reference: bool,
    flags_of: Callable[[str], tuple[bool, bool, bool]],
) -> tuple[Paragraph, ...]: ...
