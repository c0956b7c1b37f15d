"""The notebook view (Program._repr_html_) and Program.bench()."""
import re

import numpy as np
import pytest

import dfg


@pytest.fixture(scope="module")
def cnn():
    return dfg.compile("example:cnn")


def test_notebook_css_is_scoped(cnn):
    html = cnn._repr_html_()
    assert not html.startswith("<?xml")
    css = re.search(r"<style>(.*?)</style>", html, re.S).group(1)
    rules = [r.strip() for r in re.findall(r"([^{}]+)\{", css)]
    assert rules
    for rule in rules:
        for selector in rule.split(","):
            assert selector.strip().startswith("svg.dfg-plan "), selector
    # The legend explains the dashed rectangles and the lines.
    for mark in ("shares bytes", "live bytes", "lower bound", "arena size"):
        assert mark in html


def test_long_names_cut_with_the_whole_on_hover(tmp_path):
    """A name of hundreds of characters (as fusion makes) is cut in the
    picture; its rectangle's hover text holds it whole."""
    torch = pytest.importorskip("torch")
    name = "fused_" + "conv_relu_" * 40
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU())
    program = dfg.from_torch(model, torch.randn(8, 64), input_names=[name])
    html = program._repr_html_()
    assert f"<title>{name}\n" in html
    labels = re.findall(r'<text class="label"[^>]*>([^<]*)</text>', html)
    assert all(len(label) < 80 for label in labels)
    page = program.to_html()
    assert "text-overflow: ellipsis" in page and "td.title" in page


BENCH_KEYS = {"model", "backend", "device", "threads", "iterations",
              "warmup", "batch", "compile_ms", "session_ms", "mean_ms",
              "median_ms", "p90_ms", "p95_ms", "p99_ms", "min_ms", "max_ms",
              "runs_per_second", "samples_per_second", "p99_over_median",
              "warning", "arena_bytes", "weights_bytes", "peak_rss_bytes"}


def test_bench(cnn):
    report = cnn.bench(iterations=5, warmup=1)
    assert BENCH_KEYS <= set(report)
    assert report["batch"] == 32 and report["iterations"] == 5
    assert report["min_ms"] <= report["median_ms"] <= report["p90_ms"] <= \
        report["p95_ms"] <= report["p99_ms"] <= report["max_ms"]
    assert report["threads"] >= 1 and report["device"]
    assert report["compile_ms"] > 0 and report["session_ms"] > 0
    assert report["samples_per_second"] == \
        pytest.approx(32 * report["runs_per_second"], rel=1e-4)
    x = np.zeros((32, 1, 8, 8), dtype=np.float32)
    assert cnn.bench(iterations=2, warmup=0, inputs={"x": x})["iterations"] == 2
    with pytest.raises(ValueError, match="iterations"):
        cnn.bench(iterations=0)


def test_figures_and_spread_warning(cnn):
    """The figures of given run times: percentiles as numpy.percentile's,
    and the warning when p99 / median > 1.5."""
    from dfg.bench import figures
    times = list(np.random.default_rng(0).uniform(0.010, 0.012, 100))
    steady = figures(cnn, times)
    assert steady["warning"] is None
    for key, p in (("median_ms", 50), ("p90_ms", 90), ("p95_ms", 95),
                   ("p99_ms", 99)):
        assert steady[key] == pytest.approx(np.percentile(times, p) * 1e3,
                                            abs=1e-4)
    assert steady["mean_ms"] == pytest.approx(np.mean(times) * 1e3, abs=1e-4)
    assert steady["runs_per_second"] == \
        pytest.approx(1 / np.mean(times), rel=1e-4)
    wide = figures(cnn, [0.010] * 90 + [0.030] * 10)
    assert wide["p99_over_median"] == pytest.approx(3.0)
    assert "p99 is 3.00 x the median" in wide["warning"]
