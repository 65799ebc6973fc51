// iescore HTML report: builds the documents' spans from the JSON data block, page by page.
// Every text, label and id goes into the page through textContent or setAttribute: data,
// never markup.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("iescore-data").textContent);
  var LABELS = data.labels, STATUS = data.statuses, CATS = data.categories;
  var state = { label: "", category: "", status: "", doc: "", pair: "", size: String(data.page_size), page: 0 };
  var FILTERS = ["label", "category", "status", "doc", "size"];

  function $(id) { return document.getElementById(id); }
  function option(select, value, text) {
    var o = document.createElement("option");
    o.value = value;
    o.textContent = text;
    select.appendChild(o);
  }
  LABELS.forEach(function (l) { option($("f-label"), l, l); });
  CATS.forEach(function (c) { option($("f-category"), c, c.replace(/_/g, " ")); });
  STATUS.forEach(function (s) { option($("f-status"), s, s); });
  data.docs.forEach(function (d, i) { option($("f-doc"), String(i), d.id); });

  // a span: [item, start, end, label, status, category (-1: none), partner item (-1: none)];
  // a relation's arguments (argsOf: head label, start, end, text, then the tail's) and a
  // link's knowledge-base id (idOf) by side and item
  var partnerLabel = { reference: {}, prediction: {} };
  var itemOf = { reference: {}, prediction: {} };
  var argsOf = { reference: {}, prediction: {} }, idOf = { reference: {}, prediction: {} };
  data.docs.forEach(function (d) {
    d.ref.forEach(function (s) { partnerLabel.prediction[s[0]] = s[3]; itemOf.reference[s[0]] = s; });
    d.pred.forEach(function (s) { partnerLabel.reference[s[0]] = s[3]; itemOf.prediction[s[0]] = s; });
    ["reference", "prediction"].forEach(function (side) {
      if (d.args) Object.keys(d.args[side]).forEach(function (k) { argsOf[side][k] = d.args[side][k]; });
      if (d.ids) Object.keys(d.ids[side]).forEach(function (k) { idOf[side][k] = d.ids[side][k]; });
    });
  });
  function info(s, side) {
    var other = side === "reference" ? "prediction" : "reference";
    var p = s[6] >= 0 ? LABELS[partnerLabel[side][s[6]]] : "none";
    return {
      item: s[0], start: s[1], end: s[2], label: LABELS[s[3]], status: STATUS[s[4]],
      category: s[5] >= 0 ? CATS[s[5]] : "n/a", partner: s[6], partnerLabel: p, other: other,
      id: idOf[side][s[0]], partnerId: s[6] >= 0 ? idOf[other][s[6]] : undefined
    };
  }
  // an argument [label, start, end, text] as "PER [0, 2) “Al Roth”"
  function argText(a) {
    return (a[0] || "(no label)") + (a[1] >= 0 ? " [" + a[1] + ", " + a[2] + ")" : "") +
      (a[3] ? " \u201c" + a[3] + "\u201d" : "");
  }
  function relText(a) { return "(" + argText(a.slice(0, 4)) + " \u2192 " + argText(a.slice(4)) + ")"; }
  function matches(x, side) {
    if (state.label && x.label !== state.label) return false;
    if (state.category && x.category !== state.category) return false;
    if (state.status && x.status !== state.status) return false;
    if (state.pair) {
      var ab = state.pair.split("\u0000");
      var ref = side === "reference" ? x.label : x.partnerLabel;
      var pred = side === "reference" ? x.partnerLabel : x.label;
      if (ref !== ab[0] || pred !== ab[1]) return false;
    }
    return true;
  }
  var spanFilter = function () { return state.label || state.category || state.status || state.pair; };

  function docMatches(d, i) {
    if (state.doc !== "" && String(i) !== state.doc) return false;
    if (!spanFilter()) return true;
    return d.ref.some(function (s) { return matches(info(s, "reference"), "reference"); }) ||
      d.pred.some(function (s) { return matches(info(s, "prediction"), "prediction"); });
  }

  function spanElement(x, side, doc) {
    var el = document.createElement("span");
    el.className = "ent st-" + x.status + " cat-" + x.category + (spanFilter() && !matches(x, side) ? " dim" : "");
    el.setAttribute("data-side", side);
    el.setAttribute("data-status", x.status);
    el.setAttribute("data-category", x.category);
    el.setAttribute("data-label", x.label);
    el.setAttribute("data-item", String(x.item));
    el.setAttribute("data-match", spanFilter() && !matches(x, side) ? "no" : "yes");
    if (x.id !== undefined) el.setAttribute("data-id", x.id);
    var args = argsOf[side][x.item], pargs = x.partner >= 0 ? argsOf[x.other][x.partner] : undefined;
    var where = args ? " " + relText(args) : x.start >= 0 ? " [" + x.start + ", " + x.end + ")" : "";
    el.title = side + " " + x.label + where + (x.id !== undefined ? " " + x.id : "") + ": " + x.status + ", " +
      x.category + (x.partner >= 0 ? "; aligned with the " + x.other + " " + x.partnerLabel +
        (pargs ? " " + relText(pargs) : "") + (x.partnerId !== undefined ? " " + x.partnerId : "") : "");
    el.addEventListener("click", function (ev) {
      ev.stopPropagation();
      doc.querySelectorAll(".ent.hl").forEach(function (e) { e.classList.remove("hl"); });
      el.classList.add("hl");
      if (x.partner >= 0) {
        var p = doc.querySelector('.ent[data-side="' + x.other + '"][data-item="' + x.partner + '"]');
        if (p) p.classList.add("hl");
      }
    });
    return el;
  }
  function tag(text) {
    var t = document.createElement("span");
    t.className = "tag";
    t.textContent = text;
    return t;
  }

  // spans of one side in layers: within a layer spans are disjoint or nested, never crossing
  function layers(spans) {
    var sorted = spans.slice().sort(function (a, b) { return a[1] - b[1] || b[2] - a[2] || a[0] - b[0]; });
    var out = [];
    sorted.forEach(function (s) {
      for (var k = 0; k < out.length; k++) {
        var crosses = out[k].some(function (t) {
          return (t[1] < s[1] && s[1] < t[2] && t[2] < s[2]) || (s[1] < t[1] && t[1] < s[2] && s[2] < t[2]);
        });
        if (!crosses) { out[k].push(s); return; }
      }
      out.push([s]);
    });
    return out;
  }
  function fill(parent, tokens, spans, lo, hi, side, doc) {
    var t = lo, k = 0;
    while (t < hi) {
      if (k < spans.length && spans[k][1] === t) {
        var s = spans[k], j = k + 1;
        while (j < spans.length && spans[j][1] < s[2]) j++;
        var x = info(s, side), el = spanElement(x, side, doc);
        fill(el, tokens, spans.slice(k + 1, j), s[1], s[2], side, doc);
        el.appendChild(tag(x.id !== undefined ? x.label + " " + x.id : x.label));
        parent.appendChild(el);
        parent.appendChild(document.createTextNode(" "));
        t = s[2];
        k = j;
      } else {
        parent.appendChild(document.createTextNode(tokens[t] + (t + 1 < hi ? " " : "")));
        t++;
      }
    }
  }
  function sideLines(box, d, spans, side) {
    spans = spans.filter(function (s) { return !argsOf[side][s[0]]; });  // relations: their own table
    var positioned = spans.filter(function (s) { return s[1] >= 0; });
    var loose = spans.filter(function (s) { return s[1] < 0; });
    if (d.tokens && (positioned.length || !d.args)) {
      var ls = layers(positioned);
      if (!ls.length) ls = [[]];
      ls.forEach(function (layer, n) {
        var line = document.createElement("div");
        line.className = "line";
        var name = document.createElement("span");
        name.className = "side";
        name.textContent = (side === "reference" ? "gold" : "predicted") + (n ? " (" + (n + 1) + ")" : "");
        line.appendChild(name);
        fill(line, d.tokens, layer, 0, d.tokens.length, side, box);
        box.appendChild(line);
      });
    } else {
      loose = spans;
    }
    if (loose.length) {  // fillers without positions (templates): one chip each
      var chips = document.createElement("div");
      chips.className = "line chips";
      var name = document.createElement("span");
      name.className = "side";
      name.textContent = side === "reference" ? "gold" : "predicted";
      chips.appendChild(name);
      loose.forEach(function (s) {
        var x = info(s, side), el = spanElement(x, side, box);
        el.appendChild(document.createTextNode((d.texts && d.texts[side][s[0]]) || "(no text)"));
        el.appendChild(tag(x.label));
        chips.appendChild(el);
      });
      box.appendChild(chips);
    }
  }

  // a document's relations, gold then predicted: one row each with its arguments (label,
  // token positions, text), status, category and aligned partner; the label is a clickable item
  function relationTable(box, d) {
    var table = document.createElement("table");
    table.className = "num relations";
    var head = document.createElement("tr");
    ["side", "relation", "head", "tail", "status", "category", "partner"].forEach(function (h) {
      var th = document.createElement("th");
      th.textContent = h;
      head.appendChild(th);
    });
    table.appendChild(head);
    [["reference", d.ref], ["prediction", d.pred]].forEach(function (pair) {
      var side = pair[0];
      pair[1].forEach(function (s) {
        var a = argsOf[side][s[0]];
        if (!a) return;
        var x = info(s, side), tr = document.createElement("tr");
        tr.className = "rel";
        tr.setAttribute("data-side", side);
        tr.setAttribute("data-item", String(x.item));
        function cell(content) {
          var td = document.createElement("td");
          if (typeof content === "string") td.textContent = content; else td.appendChild(content);
          tr.appendChild(td);
        }
        cell(side === "reference" ? "gold" : "predicted");
        var el = spanElement(x, side, box);
        el.appendChild(document.createTextNode(x.label));
        cell(el);
        cell(argText(a.slice(0, 4)));
        cell(argText(a.slice(4)));
        cell(x.status);
        cell(x.category.replace(/_/g, " "));
        var pa = x.partner >= 0 ? argsOf[x.other][x.partner] : null;
        cell(pa ? x.partnerLabel + " " + relText(pa) : "none");
        table.appendChild(tr);
      });
    });
    if (table.children.length > 1) box.appendChild(table);
  }

  function render() {
    var shown = [];
    data.docs.forEach(function (d, i) { if (docMatches(d, i)) shown.push(i); });
    var size = state.size === "all" ? Math.max(shown.length, 1) : parseInt(state.size, 10);
    var pages = Math.max(1, Math.ceil(shown.length / size));
    state.page = Math.min(state.page, pages - 1);
    var box = $("docs");
    while (box.firstChild) box.removeChild(box.firstChild);
    shown.slice(state.page * size, (state.page + 1) * size).forEach(function (i) {
      var d = data.docs[i];
      var div = document.createElement("div");
      div.className = "doc";
      div.setAttribute("data-doc", d.id);
      var h = document.createElement("h3");
      h.textContent = "document " + d.id;
      div.appendChild(h);
      sideLines(div, d, d.ref, "reference");
      sideLines(div, d, d.pred, "prediction");
      if (d.args) relationTable(div, d);
      if (d.args && d.tokens) {
        var text = document.createElement("div");
        text.className = "line note";
        text.textContent = d.tokens.join(" ");
        div.insertBefore(text, div.children[1]);
      }
      box.appendChild(div);
    });
    $("shown").textContent = shown.length + " of " + data.docs.length + " documents; page " + (state.page + 1) +
      " of " + pages;
    $("prev").disabled = state.page === 0;
    $("next").disabled = state.page >= pages - 1;
    document.body.setAttribute("data-rendered", "yes");
  }

  FILTERS.forEach(function (f) {
    $("f-" + f).addEventListener("change", function () {
      state[f] = this.value;
      if (f !== "size") state.pair = "";
      state.page = 0;
      render();
    });
  });
  $("prev").addEventListener("click", function () { state.page--; render(); });
  $("next").addEventListener("click", function () { state.page++; render(); });
  $("clear").addEventListener("click", function () {
    ["label", "category", "status", "doc"].forEach(function (f) { state[f] = ""; $("f-" + f).value = ""; });
    state.pair = "";
    render();
  });
  function setFilters(values, pair) {
    ["label", "category", "status", "doc"].forEach(function (f) {
      state[f] = values[f] || "";
      $("f-" + f).value = state[f];
    });
    state.pair = pair || "";
    state.page = 0;
    render();
    $("controls").scrollIntoView();
  }
  // from a confusion cell or a category count to its examples
  document.querySelectorAll("td[data-ref]").forEach(function (td) {
    td.addEventListener("click", function () {
      setFilters({}, td.getAttribute("data-ref") + "\u0000" + td.getAttribute("data-pred"));
    });
  });
  document.querySelectorAll("td[data-filter-category]").forEach(function (td) {
    td.addEventListener("click", function () {
      setFilters({ category: td.getAttribute("data-filter-category"), label: td.getAttribute("data-filter-label") });
    });
  });
  // the errors by string: a row's occurrences, one line each with a few tokens of context,
  // each a link to its span in its document
  var CONTEXT = 3;
  function piece(parent, cls, text) {
    var el = document.createElement("span");
    el.className = cls;
    el.textContent = text;
    parent.appendChild(el);
  }
  function errorLine(row, occ) {
    var side = row[0] === "FP" ? "prediction" : "reference";
    var d = data.docs[occ[0]], s = itemOf[side][occ[1]];
    var a = document.createElement("a");
    a.className = "err-line";
    a.href = "#doc=" + occ[0] + "&mark=" + side + ":" + occ[1];
    a.setAttribute("data-error", row[0]);
    a.setAttribute("data-error-label", LABELS[row[1]]);
    a.setAttribute("data-docid", d.id);
    piece(a, "err-kind", row[0]);
    piece(a, "err-label", LABELS[row[1]]);
    var mark = document.createElement("mark");
    mark.textContent = row[2];
    if (d.tokens && s && s[1] >= 0) {
      var lo = Math.max(0, s[1] - CONTEXT), hi = Math.min(d.tokens.length, s[2] + CONTEXT);
      piece(a, "ctx", (lo > 0 ? "\u2026 " : "") + d.tokens.slice(lo, s[1]).join(" ") + (lo < s[1] ? " " : ""));
      a.appendChild(mark);
      piece(a, "ctx", (s[2] < hi ? " " : "") + d.tokens.slice(s[2], hi).join(" ") +
        (hi < d.tokens.length ? " \u2026" : ""));
    } else {
      a.appendChild(mark);
    }
    piece(a, "err-doc", d.id);
    a.addEventListener("click", function (ev) {  // the same link again: no hashchange, so apply it here
      if (a.getAttribute("href") === location.hash) { ev.preventDefault(); applyHash(); }
    });
    return a;
  }
  function showRow(k, open) {
    var tr = $("err-lines-" + k);
    if (!tr) return;
    if (open && !tr.hasAttribute("data-filled")) {
      var row = data.errors[k], td = tr.firstElementChild;
      row[3].forEach(function (occ) { td.appendChild(errorLine(row, occ)); });
      tr.setAttribute("data-filled", "yes");
    }
    tr.hidden = !open;
  }
  document.querySelectorAll("tr.err-row").forEach(function (tr) {
    tr.addEventListener("click", function () {
      var k = parseInt(tr.getAttribute("data-row"), 10);
      showRow(k, $("err-lines-" + k).hidden);
    });
  });

  // the state from the address's fragment, e.g. #size=all&category=missed, through the
  // same controls a reader uses (the filters it does not name cleared); errors=all (or
  // row numbers, errors=0,2) opens error rows, mark=prediction:17 marks that item
  function applyHash() {
    var values = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i >= 0) values[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
    });
    var v = values.size;
    if (v !== undefined) {
      if (!Array.prototype.some.call($("f-size").options, function (o) { return o.value === v; })) {
        option($("f-size"), v, v);
      }
      $("f-size").value = v;
      state.size = v;
    }
    ["label", "category", "status", "doc"].forEach(function (f) {
      state[f] = values[f] || "";
      $("f-" + f).value = state[f];
    });
    state.pair = "";
    state.page = 0;
    render();
    if (values.errors !== undefined && data.errors) {
      var rows = values.errors === "all" ? data.errors.map(function (_, k) { return k; }) : values.errors.split(",");
      rows.forEach(function (k) { showRow(parseInt(k, 10), true); });
    }
    var m = (values.mark || "").split(":");
    if (m[0] === "reference" || m[0] === "prediction") {
      var el = $("docs").querySelector('.ent[data-side="' + m[0] + '"][data-item="' + parseInt(m[1], 10) + '"]');
      if (el) { el.click(); el.scrollIntoView({ block: "center" }); }
    }
  }
  window.addEventListener("hashchange", applyHash);
  if (location.hash.length > 1) applyHash(); else render();
})();
