from collections.abc import Iterator

from kvlint.findings import Edit, Finding, Fix, Severity
from kvlint.rules.base import DeploymentContext, DeploymentRule
from kvlint.rules.fixes import SAFE, UNSAFE
from kvlint.units import parse_count, parse_size


class AmbiguousSizeSuffix(DeploymentRule):
    """A token count or memory quantity whose suffix reads differently from what was probably meant.

    ## What it does
    Reports engine token counts written with a suffix (`--max-model-len 32k` is 32,000 tokens in
    vLLM: lowercase k is 1,000, uppercase K is 1,024) and Kubernetes memory quantities in decimal
    units (`80G` is 80 x 10^9 bytes = 74.5 GiB; `80Gi` is 80 x 2^30) for memory limits and shm.

    ## Why is this bad?
    The model's context is a power of two (32,768); `32k` silently gives 768 tokens less. A limit
    of `80G` gives the container 5.5 GB less memory than `80Gi`.

    ## Formula
    `32k = 32,000`, `32K = 32,768` (vLLM `human_readable_int`); `G = 10^9`, `Gi = 2^30`.

    ## Example
    `--max-model-len=32k`, `memory: 80G`.

    Use instead: `--max-model-len=32768` (or `32K`), `memory: 80Gi`.

    ## How to fix
    Write the exact number, or the binary suffix.

    For a token count `--fix` spells out the number the engine reads (32k -> 32000): safe, since what
    the engine gets is unchanged and the ambiguity is gone. The power of two the suffix may stand for
    (32768) is offered as an unsafe fix: it changes the context the engine runs with, which may then not
    fit. For a memory quantity the fix (80G -> 80Gi) raises the limit by 7 %, so it is unsafe.

    ## Suppress
    `# kvlint: disable=KV304 -- reason` on the line.
    """

    id = "KV304"
    name = "ambiguous-size-suffix"
    severity = Severity.WARNING
    fix_applicability = "safe (token counts); unsafe (memory quantities)"

    def check(self, ctx: DeploymentContext) -> Iterator[Finding]:
        d = ctx.deployment
        for _field, (text, where) in d.suffixes.items():
            try:
                value = parse_count(text).value
            except ValueError:
                continue
            letter = text.strip()[-1]
            if letter.islower():
                binary = parse_count(text[:-1] + letter.upper()).value if "." not in text else None
                other = f"; {text[:-1]}{letter.upper()} would be {binary:,}" if binary else ""
                # The safe fix keeps the number the engine reads and only spells it out; the power of two
                # the author may have meant changes what the engine gets (and may not fit), so it is unsafe.
                fixes = [
                    Fix(f"write {value} (what {text} is to the engine)", SAFE, (Edit(where, str(value)),))
                ]
                if binary:
                    fixes.append(
                        Fix(
                            f"write {binary} (if {text} meant a power of two)",
                            UNSAFE,
                            (Edit(where, str(binary)),),
                        )
                    )
                yield ctx.finding(
                    self,
                    where,
                    f"{text} is {value:,} tokens (lowercase {letter} = 1,000 in vLLM), not a power of two{other}",
                    fix=f"write {value} explicitly"
                    + (f", or {binary} if a power of two was meant" if binary else ""),
                    fixes=fixes,
                )
        for what, text, where in d.memory_quantities:
            try:
                size = parse_size(text)
            except ValueError:
                continue
            if size.system == "decimal" and size.unit in ("G", "M", "T", "GB", "MB", "TB", "k", "K"):
                binary_unit = size.unit[0].upper() + "i"
                yield ctx.finding(
                    self,
                    where,
                    f"{what} {text} is {size.bytes:,} bytes ({size.bytes / 2**30:,.2f} GiB), not {size.number}{binary_unit} "
                    f"({float(size.number) * parse_size('1' + binary_unit).bytes / 2**30:,.2f} GiB)",
                    fix=f"{size.number}{binary_unit}",
                    fixes=[
                        Fix(
                            f"write {size.number}{binary_unit}",
                            UNSAFE,
                            (Edit(where, f"{size.number}{binary_unit}"),),
                        )
                    ],
                )
