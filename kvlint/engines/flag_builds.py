"""A numbered build (llama.cpp's bNNNN) and the builds read that judge it (kvlint/engines/flag_sets.py).

llama.cpp tags a build on every commit to master (b4729 is the master commit whose `git rev-list --count` is
4729, ggml-org/llama.cpp .github/workflows/build.yml and cmake/build-info.cmake): reading each is too many.
A build read is judged by its own flags; a build between two builds read at most the table's `between`
apart is judged by both: an option neither has is taken as absent from it too (one added and removed
between them, or removed and added back, is the case this cannot see), one either has is taken as present.
Any other build is not read: the flags are then judged as for an unpinned release.
"""

from __future__ import annotations

import re
from bisect import bisect_left


def judged_by(releases: tuple[str, ...], between: int, text: str) -> tuple[tuple[str, ...], str]:
    """The builds read (named by number, '4729', as data/releases.json names them) that judge build `text`
    ('b4729' or '4729'), and a note when they are its neighbours; () where it is not read and no two read
    builds close enough surround it."""
    m = re.fullmatch(r"b?(\d+)", text.strip())
    if m is None:
        return (), ""
    build = int(m.group(1))
    if str(build) in releases:
        return (str(build),), ""
    numbers = [int(r) for r in releases]
    k = bisect_left(numbers, build)
    if 0 < k < len(numbers) and numbers[k] - numbers[k - 1] <= between:
        lo, hi = releases[k - 1], releases[k]
        return (lo, hi), f"; build {build} is not read: judged by {lo} and {hi}, the builds read either side"
    return (), ""
