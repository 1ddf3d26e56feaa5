"""Check a page of `laplace report` with nothing but the Python library.

    report_page.py PAGE.html [STATS.yaml]

Prints the titles of the page's SVG figures, what it would fetch from
outside itself (any src, href, srcset, action, data or poster attribute,
url() in a style, script, link, iframe, img, object or embed element: the
page must have none), its totals (data-total cells) and its table of
processes. With STATS.yaml (laplace stat --stats), also whether every
total equals that statistic.
"""
import html.parser
import re
import sys

FETCHING_TAGS = {"script", "link", "iframe", "img", "object", "embed", "audio", "video",
                 "source", "image", "use", "frame"}
FETCHING_ATTRS = {"src", "href", "xlink:href", "srcset", "action", "data", "poster",
                  "background", "formaction"}


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.svg_titles = []
        self.outside = []
        self.totals = {}
        self.processes = []
        self.text = None  # collecting into this list while not None
        self.total_key = None
        self.in_tbody = False
        self.row = None

    def handle_starttag(self, tag, attrs):
        self.stack.append(tag)
        if tag in FETCHING_TAGS:
            self.outside.append("<%s>" % tag)
        for name, value in attrs:
            value = value or ""
            if name in FETCHING_ATTRS:
                self.outside.append("%s=%s" % (name, value))
            if name == "style" and "url(" in value:
                self.outside.append("style url(")
        if tag == "title" and "svg" in self.stack[:-1]:
            self.text = []
        attrs = dict(attrs)
        if tag == "td" and "data-total" in attrs:
            self.total_key = attrs["data-total"]
            self.text = []
        if tag == "tbody":
            self.in_tbody = True
        if tag == "tr" and self.in_tbody:
            self.row = []
        if tag == "td" and self.row is not None and self.total_key is None:
            self.text = []

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop() != tag:
            pass
        if tag == "title" and self.text is not None:
            self.svg_titles.append("".join(self.text))
            self.text = None
        elif tag == "td" and self.total_key is not None:
            self.totals[self.total_key] = "".join(self.text)
            self.total_key = None
            self.text = None
        elif tag == "td" and self.row is not None:
            self.row.append("".join(self.text))
            self.text = None
        elif tag == "tr" and self.row is not None:
            self.processes.append(self.row)
            self.row = None
        elif tag == "tbody":
            self.in_tbody = False

    def handle_data(self, data):
        if self.text is not None:
            self.text.append(data)


def stats_totals(path):
    """laplace stat --stats YAML as the page's data-total keys."""
    text = open(path).read()
    totals = {}
    groups = {"references": "references", "events": "events", "canonical_pages": "canonical-pages"}
    for key, prefix in groups.items():
        m = re.search(r"^%s: \{(.*)\}$" % key, text, re.M)
        pairs = dict(p.split(": ") for p in m.group(1).split(", "))
        if "total" in pairs:
            totals[prefix] = pairs.pop("total")
        else:
            totals[prefix] = str(sum(int(v) for v in pairs.values()))
        for k, v in pairs.items():
            totals["%s-%s" % (prefix, k)] = v
    for key in ("cow_copies", "unmapped_pages", "orphan_spaces", "mismatches", "warnings"):
        totals[key.replace("_", "-")] = re.search(r"^%s: (\d+)$" % key, text, re.M).group(1)
    return totals


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    page = Page()
    page.feed(text)
    page.close()
    # A style sheet is text to the parser: look in it as well.
    for sheet in re.findall(r"<style>(.*?)</style>", text, re.S):
        if "url(" in sheet or "@import" in sheet:
            page.outside.append("style sheet url( or @import")
    print("svg titles: " + "; ".join(page.svg_titles))
    print("outside references: %d%s" % (len(page.outside),
                                        "".join(" " + o for o in page.outside)))
    print("totals: " + " ".join("%s=%s" % kv for kv in page.totals.items()))
    for row in page.processes:
        print("process: " + " | ".join(row))
    if len(sys.argv) > 2:
        want = stats_totals(sys.argv[2])
        differ = [k for k in sorted(set(want) | set(page.totals))
                  if want.get(k) != page.totals.get(k)]
        print("totals equal the statistics" if not differ else
              "totals differ: " + " ".join("%s page %s stats %s" % (k, page.totals.get(k), want.get(k))
                                           for k in differ))


main()
