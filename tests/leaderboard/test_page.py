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
    "image": "<img src=x onerror=\"document.title='pwned'\">",
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
    records.append(
        record("commute_tc", "vgamt", 0.6, args={"lang": HOSTILE["task_value"], "ties": "wrong", "temperature": 1.0})
    )
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
    assert len([tag for tag, _ in parser.tags if tag == "table"]) == 6  # 2 families, 2 overviews, models, long table


def test_the_page_is_self_contained_sortable_and_filterable(page):
    parser = Collect()
    parser.feed(page.read_text(encoding="utf-8"))
    links = [value for _, attrs in parser.tags for name, value in attrs.items() if name in ("src", "href")]
    assert links and all("://" not in (value or "") and not (value or "").startswith("//") for value in links)
    assert not [tag for tag, _ in parser.tags if tag in ("link", "iframe", "object")]
    assert [attrs["id"] for tag, attrs in parser.tags if tag == "select"] == [
        "filter-task",
        "filter-dataset",
        "filter-pair",
    ]
    assert ("input", {"id": "filter-model", "type": "search", "placeholder": "model name"}) in parser.tags
    headers = [attrs for tag, attrs in parser.tags if tag == "th" and "data-type" in attrs]
    assert headers and all(attrs.get("data-type") in ("text", "number") for attrs in headers)
    assert all(attrs.get("data-higher") in ("0", "1") for attrs in headers if attrs["data-type"] == "number")
    overview = ("what", "gap")
    cells = [a for tag, a in parser.tags if tag == "td" and "data-label" not in a and a.get("class") not in overview]
    values = [attrs for attrs in cells if attrs.get("class") == "number" and "title" in attrs]  # shown rounded
    assert values and all("data-sort" in attrs for attrs in values)
    assert any("data-sort" not in attrs for attrs in cells)  # the others sort by their text (the page's size)


def researchers_page(folder):
    """Ten models with long names on three directions, intervals, a chance level, a lower-is-better
    metric, an undefined IC and a warning: what the committed leaderboard looks like, in small."""
    records = []
    info = {"recall@k": {"display": "R@10", "higher_is_better": True, "chance": 0.027, "statistic": "mean:hit"}}
    for tgt in ("de", "fr", "cs"):
        for index in range(10):
            name = f"sentence-transformers/very-long-model-name-number-{index}-multilingual-base"
            value = 0.05 + 0.09 * index
            item = record("xlr", name, value, args={"src": "en", "tgt": tgt, "dataset": "ikea", "k": 10, "n": 1000})
            item.metric_info = info
            item.intervals = {"recall@k": {"low": value - 0.02, "high": value + 0.02, "confidence": 0.95}}
            records.append(item)
    rank = record(
        "xlr",
        "ranker",
        3.0,
        args={"src": "en", "tgt": "de", "dataset": "ikea", "k": 10, "n": 1000},
        extra_metrics={"median_rank": 3.0},
    )
    commute = {"lang": "fr", "ties": "wrong", "temperature": 1.0}
    ic = record("commute_ic", "gemma-270m", [None], args=commute)
    ic.undefined = {"ic": "the scorer ignores the image (uses_images=False): IC is undefined"}
    tc = record("commute_tc", "gemma-270m", 0.5, args=commute)
    tc.warnings = ["--limit 10: only 10 tuples were evaluated"]
    for name, value in (("first", 1.0), ("second", 4.0), ("third", 2.0)):
        item = record("yisi2_sts", name, value, args={"src": "en", "tgt": "de"})
        item.metric_info = {"pearson": {"display": "rank", "higher_is_better": False}}
        records.append(item)
    write_results(folder / "results", [*records, rank, ic, tc])
    assert main(["leaderboard", str(folder / "results"), "-o", str(folder / "board"), "--no-plots"]) == 0
    return folder / "board" / "index.html"


def test_the_chance_row_the_intervals_and_the_footer(tmp_path):
    text = researchers_page(tmp_path).read_text(encoding="utf-8")
    assert '<tfoot><tr><td>chance</td><td class="number">0.0270</td></tr></tfoot>' in text
    assert '<span class="ci">[0.8400, 0.8800]</span>' in text
    assert 'title="undefined: the scorer ignores the image (uses_images=False): IC is undefined"' in text
    # the only TC result warns: a note on the column (numbered in the header), not a ⚠ on the cell
    assert "<li><sup>1</sup> tc (whole column): --limit 10: only 10 tuples were evaluated.</li>" in text
    assert "⚠" not in text.split("<tbody>", 3)[3].split("</tbody>")[0]
    # the undefined IC's reason is a lettered note under its table, reached by tapping the mark
    assert '<li id="t5-a"><sup>a</sup> The scorer ignores the image (uses_images=False): IC is undefined.</li>' in text
    assert 'n/a <a class="mark" href="#t5-a"' in text
    assert "<footer>" in text and "Harness: 0.1.0." in text and "ikea test @ sha256:data1" in text


needs_chromium = pytest.mark.skipif(
    shutil.which("chromium") is None, reason="chromium is not installed (apt-get install chromium)"
)


def dump_dom(path, profile) -> str:
    """The page's DOM after its scripts ran, from headless Chromium."""
    return subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--dump-dom",
            path.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


@needs_chromium
def test_a_headless_browser_runs_the_page_script_and_none_of_the_hostile_ones(page, tmp_path):
    dom = dump_dom(page, tmp_path / "profile")
    assert '<body data-ready="yes">' in dom  # the page's own script ran to its end
    assert "<title>xling-harness leaderboard</title>" in dom and "pwned" not in dom.split("</title>")[0]
    assert dom.count("<script") == 1
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom
    assert "&lt;img src=x onerror=" in dom and "<img" not in dom


def run_driver(page_path, driver: str, profile, width: int = 1280) -> str:
    """The page's DOM after ``driver`` (a script appended to a copy of the page) ran in a window ``width`` wide."""
    driven = page_path.with_name("driven.html")
    driven.write_text(page_path.read_text(encoding="utf-8").replace("</body>", f"<script>{driver}</script></body>"))
    return subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            f"--user-data-dir={profile}",
            f"--window-size={width},900",
            "--dump-dom",
            driven.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


# click the XLR header once, then twice, then filter by model name; record what is shown
SORT_AND_SEARCH = """
var table = document.querySelector("table.sortable"), header = table.tHead.rows[0].cells[1];
function order() { return Array.prototype.map.call(table.tBodies[0].rows, function (r) { return r.cells[0].textContent; }).join(","); }
var first = order(); header.click(); var once = order(); header.click(); var twice = order();
var box = document.getElementById("filter-model"); box.value = "ALP"; box.dispatchEvent(new Event("input"));
var shown = Array.prototype.filter.call(table.tBodies[0].rows, function (r) { return !r.hidden; }).length;
document.body.setAttribute("data-result", first + ";" + once + ";" + twice + ";" + shown);
"""


@needs_chromium
def test_tables_start_best_first_a_click_keeps_best_first_then_reverses_and_missing_stays_last(tmp_path):
    write_results(
        tmp_path / "results",
        [
            record("xlr", "alpha", 0.2),
            record("xlr", "beta", 0.9),
            record("backretrieval", "gamma", 0.5),
            record("xlr", "delta", 0.1),
        ],
    )
    assert main(["leaderboard", str(tmp_path / "results"), "-o", str(tmp_path / "board"), "--no-plots"]) == 0
    dom = run_driver(tmp_path / "board" / "index.html", SORT_AND_SEARCH, tmp_path / "profile")
    assert 'data-result="beta,alpha,delta,gamma;beta,alpha,delta,gamma;delta,alpha,beta,gamma;1"' in dom


# the YiSi table's metric is lower-is-better; sorting by it starts with the smallest
LOWER_FIRST = """
var table = Array.prototype.filter.call(document.querySelectorAll("[data-board]"), function (b) {
  return b.getAttribute("data-tasks") === "yisi2_sts"; })[0].querySelector("table");
function order() { return Array.prototype.map.call(table.tBodies[0].rows, function (r) { return r.cells[0].textContent; }).join(","); }
var first = order(); table.tHead.rows[0].cells[0].click(); table.tHead.rows[0].cells[1].click();
document.body.setAttribute("data-result", first + ";" + order());
"""


@needs_chromium
def test_a_lower_is_better_column_sorts_the_smallest_first(tmp_path):
    dom = run_driver(researchers_page(tmp_path), LOWER_FIRST, tmp_path / "profile")
    assert 'data-result="first,third,second;first,third,second"' in dom


# filter by task, data set and pair; record the visible boards, the visible long-table rows, and the page's width
FILTERS = """
function visible() {
  return Array.prototype.filter.call(document.querySelectorAll("[data-board]"), function (b) { return !b.hidden; })
    .map(function (b) { return b.querySelector("h3").textContent; }).join("|");
}
function set(id, value) { var s = document.getElementById(id); s.value = value; s.dispatchEvent(new Event("change")); }
var width = document.documentElement.scrollWidth;
var all = visible();
set("filter-pair", "en→fr"); var pair = visible();
var rows = Array.prototype.filter.call(document.querySelectorAll("table.long tbody tr"), function (r) { return !r.hidden; }).length;
set("filter-pair", ""); set("filter-task", "commute_ic"); var task = visible();
set("filter-task", ""); set("filter-dataset", "ikea test"); var dataset = visible().split("|").length;
document.body.setAttribute("data-result", [width, all.split("|").length, pair, rows, task, dataset].join(";"));
"""


@needs_chromium
def test_a_1280_pixel_window_holds_the_page_and_the_filters_select_task_data_set_and_pair(tmp_path):
    dom = run_driver(researchers_page(tmp_path), FILTERS, tmp_path / "profile")
    width, boards, pair, rows, task, datasets = dom.split('data-result="')[1].split('"')[0].split(";")
    assert int(width) <= 1280  # nothing runs off a 1280-pixel screen
    assert (int(boards), pair, task, int(datasets)) == (5, "ikea test en→fr", "ikea test fr", 5)
    assert int(rows) == 10  # the long table keeps only the en→fr rows: ten models, one metric each


# at phone width (headless Chromium's --dump-dom widens a 390-pixel window to 500, still the phone layout): the page
# itself does not scroll sideways, a wide table scrolls inside its box with a cue, its model column stays in view
# when scrolled, and the overview starts on the first screen
PHONE = """
var width = document.documentElement.scrollWidth - document.documentElement.clientWidth;
var phone = matchMedia("(max-width: 600px)").matches;
var overview = document.getElementById("overview").getBoundingClientRect().top;
var box = Array.prototype.filter.call(document.querySelectorAll(".board .scroll"), function (b) {
  return b.scrollWidth > b.clientWidth; })[0];
var cue = box ? box.parentNode.classList.contains("more") : false;
var hint = box ? getComputedStyle(box.parentNode.nextElementSibling).display : "";
var cell = box.querySelector("tbody td.model"), before = cell.getBoundingClientRect().left;
box.scrollLeft = box.scrollWidth; box.dispatchEvent(new Event("scroll"));
var after = cell.getBoundingClientRect().left, end = box.parentNode.classList.contains("more");
document.body.setAttribute("data-result", [width, phone, Math.round(overview), cue, hint, Math.round(before - after), end].join(";"));
"""


def wide_page(folder):
    """Three models on XLR and BackRetrieval at four cut-offs each: eight columns, wider than a phone."""
    lines = [
        record(task, f"model-{name}", value, args={"src": "en", "tgt": "de", "dataset": "ikea", "k": k})
        for name, value in (("a", 0.9), ("b", 0.6), ("c", 0.3))
        for task in ("xlr", "backretrieval")
        for k in (1, 5, 10, 20)
    ]
    write_results(folder / "results", lines)
    assert main(["leaderboard", str(folder / "results"), "-o", str(folder / "board"), "--no-plots"]) == 0
    return folder / "board" / "index.html"


@needs_chromium
def test_at_390_pixels_tables_scroll_in_their_box_with_a_cue_and_the_model_column_stays(tmp_path):
    dom = run_driver(wide_page(tmp_path), PHONE, tmp_path / "profile", width=390)
    overflow, phone, overview, cue, hint, moved, end = dom.split('data-result="')[1].split('"')[0].split(";")
    assert (int(overflow), phone) == (0, "true") and int(overview) < 844
    assert (cue, hint) == ("true", "block") and abs(int(moved)) <= 1  # shadow and line shown; the model cell stays
    assert end == "false"  # scrolled to the end: the cue goes away


FIRST_SCREEN = """
var overview = document.getElementById("overview").getBoundingClientRect();
var first = document.querySelector("#overview tbody tr").getBoundingClientRect();
document.body.setAttribute("data-result", [Math.round(overview.top), Math.round(first.bottom)].join(";"));
"""


@needs_chromium
def test_at_1280_pixels_the_overviews_first_answer_is_on_the_first_screen(tmp_path):
    dom = run_driver(researchers_page(tmp_path), FIRST_SCREEN, tmp_path / "profile")
    top, bottom = (int(v) for v in dom.split('data-result="')[1].split('"')[0].split(";"))
    assert 0 < top < bottom < 900
