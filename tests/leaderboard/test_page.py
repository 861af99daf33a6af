"""index.html: every string from the results is text, never markup; the page needs no network."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser

import pytest
from leaderboard.builders import record, write_results

from harness.cli import main

HOSTILE = {
    "model": "<script>document.title='pwned'</script>",
    "image": '<img src=x onerror="document.title=\'pwned\'">',
    "quote": '" onmouseover="alert(1)',
    "task_value": "</td></tr></table><script>alert(2)</script>",
}


class Collect(HTMLParser):
    """Start tags with their attributes, and the text of every table cell."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.cells: list[str] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "td":
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.cells.append("".join(self.cell))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("page")
    records = [record("xlr", name, 0.1 * (i + 1)) for i, name in enumerate(HOSTILE.values())]
    records.append(record("commute_tc", "vgamt", 0.6, args={"lang": HOSTILE["task_value"], "ties": "wrong", "temperature": 1.0}))
    write_results(folder / "results", records)
    assert main(["leaderboard", str(folder / "results"), "-o", str(folder / "board"), "--no-plots"]) == 0
    return folder / "board" / "index.html"


def test_hostile_strings_are_text_in_cells_and_add_no_markup(page):
    parser = Collect()
    parser.feed(page.read_text(encoding="utf-8"))
    for text in HOSTILE.values():
        if text != HOSTILE["task_value"]:
            assert text in parser.cells  # the model name, as the text of its cell
    assert any(HOSTILE["task_value"] in cell for cell in parser.cells)  # inside the signature cell
    assert [tag for tag, _ in parser.tags].count("script") == 1  # only the page's own
    assert not [tag for tag, _ in parser.tags if tag == "img"]
    assert not [(tag, name) for tag, attrs in parser.tags for name in attrs if name.startswith("on")]
    assert len([tag for tag, _ in parser.tags if tag == "table"]) == 3  # two families and the long table


def test_the_page_is_self_contained_sortable_and_filterable(page):
    parser = Collect()
    parser.feed(page.read_text(encoding="utf-8"))
    links = [value for _, attrs in parser.tags for name, value in attrs.items() if name in ("src", "href")]
    assert links and all("://" not in (value or "") and not (value or "").startswith("//") for value in links)
    assert not [tag for tag, _ in parser.tags if tag in ("link", "iframe", "object")]
    assert ("input", {"id": "filter", "type": "search", "placeholder": "model, task, signature"}) in parser.tags
    headers = [attrs for tag, attrs in parser.tags if tag == "th"]
    assert headers and all(attrs.get("data-type") in ("text", "number") for attrs in headers)
    cells = [attrs for tag, attrs in parser.tags if tag == "td"]
    assert all("data-sort" in attrs for attrs in cells)


needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed (apt-get install chromium)")


def dump_dom(path, profile) -> str:
    """The page's DOM after its scripts ran, from headless Chromium."""
    return subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         f"--user-data-dir={profile}", "--dump-dom", path.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout


@needs_chromium
def test_a_headless_browser_runs_the_page_script_and_none_of_the_hostile_ones(page, tmp_path):
    dom = dump_dom(page, tmp_path / "profile")
    assert '<body data-ready="yes">' in dom  # the page's own script ran to its end
    assert "<title>xling-harness leaderboard</title>" in dom and "pwned" not in dom.split("</title>")[0]
    assert dom.count("<script") == 1
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom
    assert "&lt;img src=x onerror=" in dom and "<img" not in dom


# appended to a copy of the page: click the XLR header once, then twice, then filter; record what is shown
DRIVER = """<script>
var table = document.querySelector("table.sortable"), header = table.tHead.rows[0].cells[1];
function order() { return Array.prototype.map.call(table.tBodies[0].rows, function (r) { return r.cells[0].textContent; }).join(","); }
header.click(); var up = order(); header.click(); var down = order();
var box = document.getElementById("filter"); box.value = "ALP"; box.dispatchEvent(new Event("input"));
var shown = Array.prototype.filter.call(table.tBodies[0].rows, function (r) { return !r.hidden; }).length;
document.body.setAttribute("data-result", up + ";" + down + ";" + shown);
</script>"""


@needs_chromium
def test_headers_sort_with_missing_cells_last_and_the_filter_hides_rows(tmp_path):
    write_results(tmp_path / "results", [record("xlr", "alpha", 0.2), record("xlr", "beta", 0.9),
                                         record("backretrieval", "gamma", 0.5), record("xlr", "delta", 0.1)])
    assert main(["leaderboard", str(tmp_path / "results"), "-o", str(tmp_path / "board"), "--no-plots"]) == 0
    driven = tmp_path / "board" / "driven.html"
    driven.write_text((tmp_path / "board" / "index.html").read_text(encoding="utf-8").replace("</body>", DRIVER + "</body>"))
    dom = dump_dom(driven, tmp_path / "profile")
    assert 'data-result="delta,alpha,beta,gamma;beta,alpha,delta,gamma;1"' in dom
