{# The report page's script, included by report.html.j2 (a template: DATA_DIR and the data-file loader are
   written only in the split layout, runner/report/site.py, so a single page holds no src= to a file). #}
(function () {
  "use strict";
  // a split report (runner/report/site.py): match pages and replays are scripts in this directory
  var DATA_DIR = {{ (layout.data_dir if layout else none)|tojson }};
  var CHUNKS = {}, WAITING = {};
  // data files call tourneyReport.loaded(name, payload): <script src> works from file://, fetch() does not
  window.tourneyReport = {
    loaded: function (name, payload) {
      CHUNKS[name] = payload;
      var cbs = WAITING[name] || [];
      delete WAITING[name];
      cbs.forEach(function (cb) { cb(payload); });
    }
  };
  {% if layout %}
  function load(name, cb) {
    if (Object.prototype.hasOwnProperty.call(CHUNKS, name)) { cb(CHUNKS[name]); return; }
    if (WAITING[name]) { WAITING[name].push(cb); return; }
    WAITING[name] = [cb];
    var s = document.createElement("script");
    s.src = DATA_DIR + "/" + name + ".js";
    s.onerror = function () {
      delete WAITING[name];
      window.alert("Could not load " + s.src + ": keep the report's data directory beside the page.");
    };
    document.head.appendChild(s);
  }
  {% else %}
  function load() { /* a single-page report has no data files: everything is inline */ }
  {% endif %}
  var DATA = null;
  function replays() {
    if (DATA === null) { DATA = JSON.parse(document.getElementById("replay-data").textContent); }
    return DATA;
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  // the same filled glyph for both sides (coloured by CSS), shown as text, never as emoji
  var PIECES = {
    K: "\u265A\uFE0E", Q: "\u265B\uFE0E", R: "\u265C\uFE0E", B: "\u265D\uFE0E", N: "\u265E\uFE0E", P: "\u265F\uFE0E",
    k: "\u265A\uFE0E", q: "\u265B\uFE0E", r: "\u265C\uFE0E", b: "\u265D\uFE0E", n: "\u265E\uFE0E", p: "\u265F\uFE0E"
  };

  function buildViewer(key) {
    var r = replays()[key];
    var v = el("div", "viewer");
    v.tabIndex = 0;
    v.setAttribute("data-key", key);
    if (!r) { v.textContent = "No replay embedded for this game."; return v; }
    var left = el("div", "left"), right = el("div", "right");
    var controls = el("div", "controls");
    var bFirst = el("button", "first", "« first"), bPrev = el("button", "prev", "‹ prev");
    var bNext = el("button", "next", "next ›"), bLast = el("button", "last", "last »");
    var slider = el("input", "slider");
    slider.type = "range"; slider.min = 0; slider.max = r.steps.length; slider.value = 0;
    [bFirst, bPrev, bNext, bLast, slider].forEach(function (c) { controls.appendChild(c); });
    var seats = el("div", "seats");
    r.names.forEach(function (n, i) {
      var s = el("span"), sw = el("span", "sw");
      sw.style.background = r.chess ? (i === 0 ? "#fff" : "#111") : "var(--seat" + (i % 8) + ")";
      s.appendChild(sw); s.appendChild(document.createTextNode((r.marks[i] || "?") + " = " + n));
      seats.appendChild(s);
    });
    var info = el("div", "info");
    var board = el("div", "board" + (r.chess ? " chess" : ""));
    var size = r.chess ? 44 : Math.max(10, Math.min(36, Math.floor(480 / Math.max(r.w, r.h, 1))));
    board.style.setProperty("--cell", size + "px");
    board.style.gridTemplateColumns = "repeat(" + r.w + ", var(--cell))";
    var cells = [];
    for (var i = 0; i < r.w * r.h; i++) { var c = el("div", "cell"); board.appendChild(c); cells.push(c); }
    var end = el("div", "end" + (r.verdict !== "normal" ? " abnormal" : ""), "Result: " + r.end);
    var stopped = el("div", "stopped", r.stopped || "");
    left.appendChild(controls); left.appendChild(seats); left.appendChild(info); left.appendChild(board);
    left.appendChild(end); left.appendChild(stopped);
    var list = el("ol", "moves");
    r.steps.forEach(function (s, k) {
      var li = el("li", "", r.names[s[0]] + " (" + (r.marks[s[0]] || "?") + "): " + s[1] + chessNote(k) + "  · " + s[2] + " ms");
      li.setAttribute("data-pos", k + 1);
      list.appendChild(li);
    });
    right.appendChild(list);
    v.appendChild(left); v.appendChild(right);

    // chess (docs/engines.md, "PGN"): pieces as a chess GUI draws them, on a checkered board;
    // each move's eval/depth and the mover's clock after it beside it
    function chessNote(k) {
      if (!r.chess) { return ""; }
      var s = r.steps[k], out = s[5] ? " · " + s[5] : "";
      var c = r.clocks ? r.clocks[k] : null;
      return out + (c !== null && c !== undefined ? " · clock " + clockText(c) : "");
    }
    function clockText(sec) {
      var m = Math.floor(sec / 60), rest = sec - 60 * m;
      return m + ":" + (rest < 10 ? "0" : "") + rest.toFixed(3);
    }
    var pos = 0;
    function cellsAt(k) {
      var grid = r.start.split("");
      for (var s = 0; s < k; s++) {
        var ch = r.steps[s][3];
        for (var j = 0; j < ch.length; j += 3) {
          for (var n = 0; n < ch[j + 1]; n++) { grid[ch[j] + n] = ch[j + 2]; }
        }
      }
      return grid;
    }
    function show(k) {
      pos = Math.max(0, Math.min(r.steps.length, k));
      var grid = cellsAt(pos);
      var last = {};
      if (pos > 0) {
        var ch = r.steps[pos - 1][3];
        for (var j = 0; j < ch.length; j += 3) { for (var n = 0; n < ch[j + 1]; n++) { last[ch[j] + n] = true; } }
      }
      for (var i = 0; i < cells.length; i++) {
        var kind = r.kinds[grid[i]] || "empty";
        if (r.chess) {
          var sq = ((Math.floor(i / 8) + i % 8) % 2) ? "dark" : "light", p = grid[i];
          var side = PIECES[p] ? (p === p.toUpperCase() ? " pw" : " pb") : "";
          cells[i].className = "cell sq " + sq + side + (last[i] ? " last" : "");
          cells[i].textContent = PIECES[p] || "";
          cells[i].title = PIECES[p] ? p : "";
          continue;
        }
        cells[i].className = "cell k-" + kind + (last[i] ? " last" : "");
        cells[i].textContent = kind === "empty" ? "" : grid[i];
      }
      if (pos === 0) {
        info.textContent = "Start position · " + r.steps.length + " moves · " + r.names[0] + " (" + (r.marks[0] || "?") + ") moves first";
      } else {
        var s = r.steps[pos - 1];
        info.textContent = "Move " + pos + " / " + r.steps.length + " · " + r.names[s[0]] + " (" + (r.marks[s[0]] || "?") + ") played " + s[1] + chessNote(pos - 1) + " · " + s[2] + " ms" + (s[4].length ? " · " + s[4].join(", ") + " forfeited before this move" : "");
      }
      end.style.display = pos === r.steps.length ? "" : "none";
      stopped.style.display = pos === r.steps.length && r.stopped ? "" : "none";
      slider.value = pos;
      var items = list.children;
      for (var q = 0; q < items.length; q++) { items[q].className = q === pos - 1 ? "cur" : ""; }
      if (pos > 0 && items[pos - 1] && items[pos - 1].scrollIntoView && list.scrollHeight > list.clientHeight) {
        list.scrollTop = items[pos - 1].offsetTop - list.clientHeight / 2;
      }
    }
    bFirst.addEventListener("click", function () { show(0); });
    bPrev.addEventListener("click", function () { show(pos - 1); });
    bNext.addEventListener("click", function () { show(pos + 1); });
    bLast.addEventListener("click", function () { show(r.steps.length); });
    slider.addEventListener("input", function () { show(parseInt(slider.value, 10)); });
    list.addEventListener("click", function (e) {
      var li = e.target.closest("li");
      if (li) { show(parseInt(li.getAttribute("data-pos"), 10)); }
    });
    v.addEventListener("keydown", function (e) {
      if (e.key === "ArrowRight") { show(pos + 1); e.preventDefault(); }
      else if (e.key === "ArrowLeft") { show(pos - 1); e.preventDefault(); }
      else if (e.key === "Home") { show(0); e.preventDefault(); }
      else if (e.key === "End") { show(r.steps.length); e.preventDefault(); }
    });
    show(0);
    return v;
  }

  function toggleReplay(b) {
    var slot = b.closest(".matchbody").querySelector(".replay-slot");
    var key = b.getAttribute("data-key");
    var open = slot.firstChild;
    slot.innerHTML = "";
    if (!open || open.getAttribute("data-key") !== key) {
      var v = buildViewer(key);
      slot.appendChild(v);
      v.focus({ preventScroll: true });
    }
  }

  // -- a split report's paged match lists ---------------------------------------
  function showPage(box, page, then) {
    var pages = parseInt(box.getAttribute("data-pages"), 10);
    page = Math.max(1, Math.min(pages, page));
    var slot = box.querySelector(".match-page");
    slot.setAttribute("data-want", page);
    slot.classList.add("loading");
    load("matches-" + box.getAttribute("data-stage") + "-" + page, function (html) {
      if (slot.getAttribute("data-want") !== String(page)) { return; }  // a later request won
      slot.innerHTML = html;
      slot.setAttribute("data-page", page);
      slot.classList.remove("loading");
      box.querySelector(".page-no").value = page;
      if (then) { then(); }
    });
  }
  function openMatch(box, page, id) {
    box.open = true;
    showPage(box, page, function () {
      var d = document.getElementById("m-" + id);
      if (d) { showTarget(d); }
    });
  }
  function currentPage(box) { return parseInt(box.querySelector(".match-page").getAttribute("data-page"), 10) || 1; }
  document.addEventListener("toggle", function (e) {
    var box = e.target;
    if (box.matches && box.matches("details.matches.paged") && box.open &&
        !box.querySelector(".match-page").hasAttribute("data-want")) {
      showPage(box, 1);
    }
  }, true);
  var searchTimer = null;
  function search(input) {
    var box = input.closest("details.matches"), out = box.querySelector(".filter-results");
    var q = input.value.trim().toLowerCase();
    if (!q) { out.innerHTML = ""; return; }
    load("index-" + box.getAttribute("data-stage"), function (index) {
      if (input.value.trim().toLowerCase() !== q) { return; }
      var hits = index.filter(function (r) { return (r[0] + " " + r[1]).toLowerCase().indexOf(q) >= 0; });
      out.innerHTML = "";
      out.appendChild(el("div", "muted", hits.length + " match" + (hits.length === 1 ? "" : "es") + (hits.length > 50 ? " (first 50 shown)" : "")));
      hits.slice(0, 50).forEach(function (r) {
        var a = el("a", "hit", r[1] + " · " + r[0]);
        a.href = "#m-" + r[0];
        a.setAttribute("data-page", r[2]);
        out.appendChild(a);
      });
    });
  }

  document.addEventListener("click", function (e) {
    var b = e.target.closest("button.open-replay");
    if (b) {
      var pageEl = b.closest(".match-page");
      if (DATA_DIR && pageEl && !replays()[b.getAttribute("data-key")]) {
        load("replays-" + pageEl.getAttribute("data-stage") + "-" + pageEl.getAttribute("data-page"), function (more) {
          Object.assign(replays(), more);
          toggleReplay(b);
        });
      } else {
        toggleReplay(b);
      }
      return;
    }
    var toReplay = e.target.closest("a.to-replay");
    if (toReplay && !DATA_DIR) {
      e.preventDefault();
      WANT_REPLAY = toReplay.getAttribute("data-key");
      if (location.hash === toReplay.getAttribute("href")) { reveal(); } else { location.hash = toReplay.getAttribute("href"); }
      return;
    }
    var link = e.target.closest("a[data-page]");
    if (link && DATA_DIR) {
      var section = link.closest("section"), pbox = link.hasAttribute("data-stage")
        ? document.querySelector('details.matches.paged[data-stage="' + link.getAttribute("data-stage") + '"]')
        : section && section.querySelector("details.matches.paged");
      var id = link.getAttribute("href").slice(3);
      if (link.classList.contains("to-replay")) { WANT_REPLAY = link.getAttribute("data-key"); }
      if (pbox) {
        e.preventDefault();
        openMatch(pbox, parseInt(link.getAttribute("data-page"), 10), id);
        return;
      }
    }
    var more = e.target.closest("button.more-standings");
    if (more) {
      var table = more.closest("table");
      load("standings-" + more.getAttribute("data-stage"), function (html) {
        table.tBodies[0].innerHTML = html;
        table.deleteTFoot();
      });
      return;
    }
    var moreRounds = e.target.closest("button.more-bracket");
    if (moreRounds) {
      var drawn = moreRounds.closest("section").querySelector(".bracket");
      load("bracket-" + moreRounds.getAttribute("data-stage"), function (html) {
        drawn.outerHTML = html;
        moreRounds.parentNode.remove();
      });
      return;
    }
    var moreFinal = e.target.closest("button.more-final");
    if (moreFinal) {
      var finalTable = moreFinal.closest("table");
      load("final", function (parts) {
        finalTable.tBodies[0].innerHTML = parts.rows;
        finalTable.closest("section").querySelector(".shared-places").innerHTML = parts.shared;
        finalTable.deleteTFoot();
      });
      return;
    }
    var nav = e.target.closest(".pager button");
    if (nav) {
      var nbox = nav.closest("details.matches");
      var last = parseInt(nbox.getAttribute("data-pages"), 10), cur = currentPage(nbox);
      var to = nav.classList.contains("page-first") ? 1 : nav.classList.contains("page-last") ? last
        : nav.classList.contains("page-prev") ? cur - 1 : cur + 1;
      showPage(nbox, to);
      return;
    }
    var th = e.target.closest("table.sortable th");
    if (th) {
      var table = th.closest("table"), body = table.tBodies[0];
      var idx = Array.prototype.indexOf.call(th.parentNode.children, th);
      var asc = th.getAttribute("data-dir") !== "asc";
      th.setAttribute("data-dir", asc ? "asc" : "desc");
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[idx].textContent.trim(), y = b.cells[idx].textContent.trim();
        var nx = parseFloat(x), ny = parseFloat(y);
        var cmp = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return asc ? cmp : -cmp;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    }
  });
  // -- links into the page (docs/config.md, "The HTML report"): #m-ID opens that match, #e-NAME
  // that entry's games, on load and on hashchange. The browser alone would not: a match sits in a
  // closed <details>, and in a split report it is not in the page until its page is loaded.
  var WANT_REPLAY = null;  // an entry panel's "replay" link: that game's viewer opens with its match
  function showTarget(t) {
    for (var p = t; p; p = p.parentElement) { if (p.tagName === "DETAILS") { p.open = true; } }
    t.scrollIntoView({ block: "start" });
    var key = WANT_REPLAY;
    WANT_REPLAY = null;
    var b = key && t.querySelector('button.open-replay[data-key="' + key + '"]');
    if (b) {
      var shown = b.closest(".matchbody").querySelector(".replay-slot").firstChild;
      if (!shown || shown.getAttribute("data-key") !== key) { b.click(); }
    }
  }
  function reveal() {
    var id = "";
    try { id = decodeURIComponent(location.hash.slice(1)); } catch (err) { return; }
    if (!id) { return; }
    var t = document.getElementById(id);
    if (t) { showTarget(t); return; }
    if (!DATA_DIR) { return; }
    if (id.indexOf("m-") === 0) { openLinkedMatch(id.slice(2)); return; }
    if (id.indexOf("e-") === 0) {
      load("entry-" + id, function (html) {
        document.querySelector("#entries .entry-slot").innerHTML = html;
        var panel = document.getElementById(id);
        if (panel) { showTarget(panel); }
      });
    }
  }
  // a link to a match (report.html#m-ID) whose page is not loaded: find it in the stages' indexes
  function openLinkedMatch(want) {
    var boxes = Array.prototype.slice.call(document.querySelectorAll("details.matches.paged"));
    (function next(i) {
      if (i >= boxes.length) { return; }
      load("index-" + boxes[i].getAttribute("data-stage"), function (index) {
        var hit = index.find(function (r) { return r[0] === want; });
        if (hit) { openMatch(boxes[i], hit[2], want); } else { next(i + 1); }
      });
    })(0);
  }
  reveal();
  window.addEventListener("hashchange", reveal);
  document.addEventListener("change", function (e) {
    if (e.target.classList && e.target.classList.contains("page-no")) {
      showPage(e.target.closest("details.matches"), parseInt(e.target.value, 10) || 1);
    }
  });
  document.addEventListener("input", function (e) {
    if (!e.target.classList || !e.target.classList.contains("filter")) { return; }
    if (e.target.closest("details.matches.paged")) {
      var input = e.target;
      window.clearTimeout(searchTimer);
      searchTimer = window.setTimeout(function () { search(input); }, 150);
      return;
    }
    var q = e.target.value.toLowerCase();
    var box = e.target.closest("details.matches");
    box.querySelectorAll("details.match").forEach(function (d) {
      d.style.display = !q || d.getAttribute("data-filter").toLowerCase().indexOf(q) >= 0 ? "" : "none";
    });
  });
})();
