import pytest

from kvlint.units import GIB, gib, human_bytes, parse_count, parse_size, tokens


@pytest.mark.parametrize(
    ("text", "expected", "system"),
    [
        ("80GB", 80 * 10**9, "decimal"),
        ("74.5 GiB", int(74.5 * 2**30), "binary"),
        ("80Gi", 80 * 2**30, "binary"),
        ("80G", 80 * 10**9, "decimal"),
        ("512MiB", 512 * 2**20, "binary"),
        ("128KiB", 128 * 1024, "binary"),
        ("128Ki", 128 * 1024, "binary"),
        ("1.5TB", 1_500_000_000_000, "decimal"),
        (131072, 131072, "none"),
        ("131072", 131072, "none"),
    ],
)
def test_parse_size(text, expected, system):
    size = parse_size(text)
    assert size.bytes == expected
    assert size.system == system


@pytest.mark.parametrize("bad", ["80 gigs", "-5GB", "GB", "", True, -1, "80m"])
def test_parse_size_rejects(bad):
    with pytest.raises(ValueError):
        parse_size(bad)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("32k", 32_000),
        ("32K", 32_768),
        ("25.6k", 25_600),
        ("1m", 1_000_000),
        ("1M", 1_048_576),
        ("8192", 8192),
        (4096, 4096),
    ],
)
def test_parse_count_follows_vllm(text, expected):
    assert parse_count(text).value == expected


@pytest.mark.parametrize("bad", ["2.5K", "lots", "1e3x", 1.5])
def test_parse_count_rejects(bad):
    with pytest.raises(ValueError):
        parse_count(bad)


def test_formatting_uses_binary_units_and_separators():
    assert gib(16 * GIB) == "16.00 GiB"
    assert gib(16_060_522_496) == "14.96 GiB"
    assert human_bytes(131072) == "128 KiB"
    assert human_bytes(512 * 2**20) == "512 MiB"
    assert tokens(131072) == "131,072"
