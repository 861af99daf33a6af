"""The pages of the board: every string from the results is text, never markup; no page needs the network; the
ranked tables and the family tables sort and filter in a browser."""

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
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "td":
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.cells.append("".join(self.cell))
            self.cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self.cell is not None:
            self.cell.append(data)


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    folder = tmp_path_factory.mktemp("page")
    records = [record("xlr", name, 0.1 * (i + 1)) for i, name in enumerate(HOSTILE.values())]
    records.append(
        record("commute_tc", "vgamt", 0.6, args={"lang": HOSTILE["task_value"], "ties": "wrong", "temperature": 1.0})
    )
    write_results(folder / "results", records)
    assert main(["leaderboard", str(folder / "results"), "-o", str(folder / "board"), "--no-plots"]) == 0
    return folder / "board"


@pytest.fixture(scope="module")
def page(board):
    return board / "index.html"


def parsed(path) -> Collect:
    parser = Collect()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_hostile_strings_are_text_in_cells_and_add_no_markup(board):
    pages = sorted(board.rglob("*.html"))
    assert [p.relative_to(board).as_posix() for p in pages if "/" in p.relative_to(board).as_posix()][:2] == [
        "families/commute.html",
        "families/retrieval.html",
    ]
    for path in pages:
        parser = parsed(path)
        assert [tag for tag, _ in parser.tags].count("script") == 1  # only the page's own
        assert not [tag for tag, _ in parser.tags if tag == "img"]
        assert not [(tag, name) for tag, attrs in parser.tags for name in attrs if name.startswith("on")]
    index = parsed(board / "index.html")
    for text in HOSTILE.values():
        if text != HOSTILE["task_value"]:
            assert text in index.cells  # the model name, as the text of its cell
    assert HOSTILE["task_value"] in "".join(parsed(board / "families" / "commute.html").text)  # in its signature
    assert len([tag for tag, _ in index.tags if tag == "table"]) == 2  # one ranked table per family


def test_the_page_is_self_contained_sortable_and_filterable(board):
    for path in sorted(board.rglob("*.html")):
        parser = parsed(path)
        links = [value for _, attrs in parser.tags for name, value in attrs.items() if name in ("src", "href")]
        assert all("://" not in (value or "") and not (value or "").startswith("//") for value in links)
        assert all((path.parent / v).resolve().is_file() for v in links if v and not v.startswith("#")), path
        assert not [tag for tag, _ in parser.tags if tag in ("link", "iframe", "object")]
    index = parsed(board / "index.html")
    assert [attrs["id"] for tag, attrs in index.tags if tag == "select"] == [
        "filter-family",
        "filter-dataset",
        "filter-pair",
    ]
    family = parsed(board / "families" / "retrieval.html")
    assert [attrs["id"] for tag, attrs in family.tags if tag == "select"] == [
        "filter-task",
        "filter-dataset",
        "filter-pair",
    ]
    for parser in (index, family):
        assert ("input", {"id": "filter-model", "type": "search", "placeholder": "model name"}) in parser.tags
        headers = [attrs for tag, attrs in parser.tags if tag == "th" and "data-type" in attrs]
        assert headers and all(attrs.get("data-type") in ("text", "number") for attrs in headers)
        assert all(attrs.get("data-higher") in ("0", "1") for attrs in headers if attrs["data-type"] == "number")
    cells = [a for tag, a in family.tags if tag == "td"]
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
    return folder / "board"


def test_the_chance_row_the_intervals_and_the_footer(tmp_path):
    board = researchers_page(tmp_path)
    retrieval = (board / "families" / "retrieval.html").read_text(encoding="utf-8")
    text = (board / "families" / "commute.html").read_text(encoding="utf-8")
    assert '<tfoot><tr><td>chance</td><td class="number">0.0270</td></tr></tfoot>' in retrieval
    assert '<span class="ci">[0.8400, 0.8800]</span>' in retrieval
    assert 'title="undefined: the scorer ignores the image (uses_images=False): IC is undefined"' in text
    # the only TC result warns: a note on the column (numbered in the header), not a ⚠ on the cell
    assert "<li><sup>1</sup> tc (whole column): --limit 10: only 10 tuples were evaluated.</li>" in text
    assert "⚠" not in text.split("<tbody>", 1)[1].split("</tbody>")[0]
    # the undefined IC's reason is a lettered note under its table, reached by tapping the mark
    assert '<li id="t1-a"><sup>a</sup> The scorer ignores the image (uses_images=False): IC is undefined.</li>' in text
    assert 'n/a <a class="mark" href="#t1-a"' in text
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
var table = document.querySelector("table.sortable"), headers = table.tHead.rows[table.tHead.rows.length - 1];
var header = headers.cells[COLUMN];
function order() { return Array.prototype.map.call(table.tBodies[0].rows, function (r) {
  return (r.querySelector(".model") || r.cells[0]).textContent; }).join(","); }
var first = order(); header.click(); var once = order() + "/" + header.getAttribute("aria-sort");
header.click(); var twice = order() + "/" + header.getAttribute("aria-sort");
var content = getComputedStyle(header, "::after").content;
var arrow = content.indexOf("\\u25B2") >= 0 ? "up" : content.indexOf("\\u25BC") >= 0 ? "down" : "none";
var box = document.getElementById("filter-model"); box.value = "ALP"; box.dispatchEvent(new Event("input"));
var shown = Array.prototype.filter.call(table.tBodies[0].rows, function (r) { return !r.hidden; }).length;
document.body.setAttribute("data-result", first + ";" + once + ";" + twice + ";" + shown + ";" + arrow);
"""


def four_models(folder):
    write_results(
        folder / "results",
        [
            record("xlr", "alpha", 0.2),
            record("xlr", "beta", 0.9),
            record("backretrieval", "gamma", 0.5),
            record("xlr", "delta", 0.1),
        ],
    )
    assert main(["leaderboard", str(folder / "results"), "-o", str(folder / "board"), "--no-plots"]) == 0
    return folder / "board"


@needs_chromium
def test_tables_start_best_first_a_click_keeps_best_first_then_reverses_and_missing_stays_last(tmp_path):
    board = four_models(tmp_path)
    driver = SORT_AND_SEARCH.replace("COLUMN", "1")
    dom = run_driver(board / "families" / "retrieval.html", driver, tmp_path / "profile")
    result = 'data-result="beta,alpha,delta,gamma;beta,alpha,delta,gamma/descending;delta,alpha,beta,gamma/ascending;1;'
    assert result + "up" in dom


@needs_chromium
def test_the_ranked_table_sorts_by_its_mean_with_an_arrow_and_aria_sort_and_filters_by_model(tmp_path):
    board = four_models(tmp_path)
    dom = run_driver(board / "index.html", SORT_AND_SEARCH.replace("COLUMN", "3"), tmp_path / "profile")
    first, once, twice, shown, arrow = dom.split('data-result="')[1].split('"')[0].split(";")
    assert first == "beta,alpha,delta"  # gamma has no xlr result: it is on the family page, not in this ranking
    assert (once, twice, shown) == ("beta,alpha,delta/descending", "delta,alpha,beta/ascending", "1")
    assert arrow == "up"  # ascending: the arrow points up


# the YiSi table's metric is lower-is-better; sorting by it starts with the smallest
LOWER_FIRST = """
var table = document.querySelector("[data-board] table");
function order() { return Array.prototype.map.call(table.tBodies[0].rows, function (r) { return r.cells[0].textContent; }).join(","); }
var first = order(); table.tHead.rows[0].cells[0].click(); table.tHead.rows[0].cells[1].click();
document.body.setAttribute("data-result", first + ";" + order());
"""


@needs_chromium
def test_a_lower_is_better_column_sorts_the_smallest_first(tmp_path):
    dom = run_driver(researchers_page(tmp_path) / "families" / "yisi.html", LOWER_FIRST, tmp_path / "profile")
    assert 'data-result="first,third,second;first,third,second"' in dom


# filter by family, data set, pair and model; record the visible sections, columns and rows, and the page's width
FILTERS = """
function shown(selector) {
  return Array.prototype.filter.call(document.querySelectorAll(selector), function (e) {
    return e.offsetParent !== null; }).length;
}
function set(id, value) { var s = document.getElementById(id); s.value = value; s.dispatchEvent(new Event("change")); }
var width = document.documentElement.scrollWidth;
var all = [shown("section.family"), shown("table.ranked td[data-dataset]")];
set("filter-pair", "en→fr"); var pair = [shown("section.family"), shown("table.ranked td[data-dataset]")];
set("filter-pair", ""); set("filter-family", "yisi"); var family = [shown("section.family"), shown("table.ranked tbody tr")];
set("filter-family", ""); var box = document.getElementById("filter-model"); box.value = "number-3";
box.dispatchEvent(new Event("input")); var model = shown("table.ranked tbody tr");
document.body.setAttribute("data-result", [width, all, pair, family, model].join(";"));
"""


@needs_chromium
def test_a_1280_pixel_window_holds_the_page_and_the_filters_select_family_data_set_pair_and_model(tmp_path):
    board = researchers_page(tmp_path)
    dom = run_driver(board / "index.html", FILTERS, tmp_path / "profile")
    width, everything, pair, family, model = dom.split('data-result="')[1].split('"')[0].split(";")
    assert int(width) <= 1280  # nothing runs off a 1280-pixel screen
    # retrieval: 11 models (the ranker too, its missing cells shown) x 3 directions; CoMMuTE: gemma's TC; YiSi-2: 3
    assert everything == "3,37"
    assert pair == "3,11"  # only the en→fr cells of the eleven models
    assert family == "1,3"  # the YiSi-2 section alone, its three models
    assert model == "1"
    for page in ("retrieval", "commute", "yisi"):
        dom = run_driver(board / "families" / f"{page}.html", FILTERS.split("var all")[0] + WIDTH, tmp_path / "p2")
        assert int(dom.split('data-result="')[1].split('"')[0]) <= 1280


WIDTH = 'document.body.setAttribute("data-result", String(width));'


# at phone width (headless Chromium's --dump-dom widens a 390-pixel window to 500, still the phone layout): the page
# itself does not scroll sideways, a wide table scrolls inside its box with a cue, its model column stays in view
# when scrolled, and the ranked table starts within two screens
PHONE = """
var width = document.documentElement.scrollWidth - document.documentElement.clientWidth;
var phone = matchMedia("(max-width: 600px)").matches;
var ranked = document.querySelector("table.ranked").getBoundingClientRect().top;
var box = Array.prototype.filter.call(document.querySelectorAll(".scroll"), function (b) {
  return b.scrollWidth > b.clientWidth; })[0];
var cue = box ? box.parentNode.classList.contains("more") : false;
var hint = box ? getComputedStyle(box.parentNode.nextElementSibling).display : "";
var cell = box.querySelector("tbody td.model"), before = cell.getBoundingClientRect().left;
var row = cell.parentNode, last = row.cells[row.cells.length - 1];
box.scrollLeft = box.scrollWidth; box.dispatchEvent(new Event("scroll"));
var after = cell.getBoundingClientRect().left, end = box.parentNode.classList.contains("more");
var aligned = Math.abs(cell.getBoundingClientRect().top - last.getBoundingClientRect().top) <= 1;
document.body.setAttribute("data-result", [width, phone, Math.round(ranked), cue, hint, Math.round(before - after), end, aligned].join(";"));
"""


def wide_page(folder):
    """Three models on XLR at four cut-offs: four directions in the ranked table, wider than a phone."""
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
    overflow, phone, ranked, cue, hint, moved, end, aligned = dom.split('data-result="')[1].split('"')[0].split(";")
    assert (int(overflow), phone) == (0, "true") and int(ranked) < 2 * 844
    assert (cue, hint) == ("true", "block") and abs(int(moved)) <= 1  # shadow and line shown; the model cell stays
    assert end == "false" and aligned == "true"  # scrolled to the end: the cue goes away; the row stays one row


FIRST_SCREEN = """
var ranked = document.querySelector("table.ranked").getBoundingClientRect();
var first = document.querySelector("table.ranked tbody tr").getBoundingClientRect();
var filters = document.querySelector(".filters").getBoundingClientRect();
document.body.setAttribute("data-result", [Math.round(filters.bottom), Math.round(ranked.top), Math.round(first.bottom)].join(";"));
"""


@needs_chromium
def test_at_1280_pixels_the_filters_and_the_first_ranked_rows_are_on_the_first_screen(tmp_path):
    dom = run_driver(researchers_page(tmp_path) / "index.html", FIRST_SCREEN, tmp_path / "profile")
    filters, top, bottom = (int(v) for v in dom.split('data-result="')[1].split('"')[0].split(";"))
    assert 0 < filters < top < bottom < 900
