// vaultmem graph view: a canvas drawing of the link graph with a force layout, written for this
// package (no third-party code). Nodes are coloured by type and faded unless active; a click
// opens the note. Built to stay usable at 5,000 notes: repulsion only between nodes in nearby
// grid cells, the layout runs in small time slices between frames, and drawing batches one path
// per colour.
(function () {
  "use strict";
  var canvas = document.getElementById("graph");
  var tip = document.getElementById("tip");
  var ctx = canvas.getContext("2d");
  // timings in ms since the navigation started (performance.now's origin)
  var api = { ready: false, settled: false, nodes: 0, edges: 0, iterations: 0, drawMs: null };
  window.vaultmemGraph = api;

  var N = 0, nodes = [], edges = [], X, Y, VX, VY, deg, anchor = -1;
  var view = { x: 0, y: 0, k: 1 }, dpr = window.devicePixelRatio || 1;
  var MAX_ITER = 300, SLICE_MS = 30, iter = 0, dirty = true, urgent = false, lastDraw = 0;

  function resize() {
    var r = canvas.getBoundingClientRect();
    canvas.width = Math.max(1, Math.round(r.width * dpr));
    canvas.height = Math.max(1, Math.round(r.height * dpr));
    dirty = true;
  }

  function init(data) {
    nodes = data.nodes; edges = data.edges; N = nodes.length;
    X = new Float32Array(N); Y = new Float32Array(N); VX = new Float32Array(N); VY = new Float32Array(N);
    deg = new Float32Array(N);
    for (var e = 0; e < edges.length; e++) { deg[edges[e][0]]++; deg[edges[e][1]]++; }
    // start on a sunflower spiral, best-linked nodes in the middle
    var order = []; for (var i = 0; i < N; i++) order.push(i);
    order.sort(function (a, b) { return deg[b] - deg[a]; });
    var golden = Math.PI * (3 - Math.sqrt(5));
    for (var j = 0; j < N; j++) {
      var n = order[j], r = 12 * Math.sqrt(j + 0.5);
      X[n] = r * Math.cos(j * golden); Y[n] = r * Math.sin(j * golden);
    }
    for (var t = 0; t < N; t++) {
      nodes[t].colour = data.colours[nodes[t].type] || "#98a2b3";
      nodes[t].faded = nodes[t].status && nodes[t].status !== "active";
    }
    for (var q = 0; q < N; q++) if (data.anchor && nodes[q].path === data.anchor) anchor = q;
    api.nodes = N; api.edges = edges.length;
    MAX_ITER = N > 2000 ? 200 : 300;
    fit();
  }

  function fit() {
    if (!N) return;
    var minx = Infinity, miny = Infinity, maxx = -Infinity, maxy = -Infinity;
    for (var i = 0; i < N; i++) {
      if (X[i] < minx) minx = X[i]; if (X[i] > maxx) maxx = X[i];
      if (Y[i] < miny) miny = Y[i]; if (Y[i] > maxy) maxy = Y[i];
    }
    var w = canvas.width / dpr, h = canvas.height / dpr;
    view.k = Math.min(w / (maxx - minx + 60), h / (maxy - miny + 60), 4);
    view.x = w / 2 - view.k * (minx + maxx) / 2;
    view.y = h / 2 - view.k * (miny + maxy) / 2;
    dirty = true;
  }

  // one layout step: repulsion between nodes in nearby grid cells (at most NEAR comparisons per
  // node, so a dense clump cannot make a step quadratic), springs along links, a pull to the centre
  var NEAR = 40, cellStart = null, cellNodes = null;
  function step(alpha) {
    var i, j, dx, dy, d2, f, minx = Infinity, miny = Infinity, maxx = -Infinity, maxy = -Infinity;
    for (i = 0; i < N; i++) {
      if (X[i] < minx) minx = X[i]; if (X[i] > maxx) maxx = X[i];
      if (Y[i] < miny) miny = Y[i]; if (Y[i] > maxy) maxy = Y[i];
    }
    var cell = 50, gw, gh;
    for (;;) {
      gw = Math.floor((maxx - minx) / cell) + 1; gh = Math.floor((maxy - miny) / cell) + 1;
      if (gw * gh <= 4 * N + 16) break;
      cell *= 1.5;
    }
    if (!cellStart || cellStart.length < gw * gh + 1) cellStart = new Int32Array(gw * gh + 1);
    else cellStart.fill(0);
    if (!cellNodes) cellNodes = new Int32Array(N);
    var cellOf = new Int32Array(N);
    for (i = 0; i < N; i++) {
      var c = Math.floor((X[i] - minx) / cell) + gw * Math.floor((Y[i] - miny) / cell);
      cellOf[i] = c; cellStart[c + 1]++;
    }
    for (i = 0; i < gw * gh; i++) cellStart[i + 1] += cellStart[i];
    var fillAt = cellStart.slice(0, gw * gh);
    for (i = 0; i < N; i++) cellNodes[fillAt[cellOf[i]]++] = i;
    var range2 = cell * cell;
    for (i = 0; i < N; i++) {
      var cx = cellOf[i] % gw, cy = Math.floor(cellOf[i] / gw), seen = 0;
      for (var oy = -1; oy <= 1 && seen < NEAR; oy++) {
        if (cy + oy < 0 || cy + oy >= gh) continue;
        for (var ox = -1; ox <= 1 && seen < NEAR; ox++) {
          if (cx + ox < 0 || cx + ox >= gw) continue;
          var cc = cx + ox + gw * (cy + oy);
          for (var m = cellStart[cc]; m < cellStart[cc + 1] && seen < NEAR; m++) {
            j = cellNodes[m]; if (j === i) continue;
            seen++;
            dx = X[i] - X[j]; dy = Y[i] - Y[j]; d2 = dx * dx + dy * dy + 0.01;
            if (d2 > range2) continue;
            f = 150 * alpha / d2;
            VX[i] += dx * f; VY[i] += dy * f;
          }
        }
      }
    }
    for (var e = 0; e < edges.length; e++) {
      var a = edges[e][0], b = edges[e][1];
      dx = X[b] - X[a]; dy = Y[b] - Y[a];
      var d = Math.sqrt(dx * dx + dy * dy) + 0.01;
      f = 0.05 * alpha * (d - 45) / d;
      var wa = 1 / (1 + deg[a] * 0.05), wb = 1 / (1 + deg[b] * 0.05);
      VX[a] += dx * f * wa; VY[a] += dy * f * wa; VX[b] -= dx * f * wb; VY[b] -= dy * f * wb;
    }
    for (i = 0; i < N; i++) {
      VX[i] -= X[i] * 0.002 * alpha; VY[i] -= Y[i] * 0.002 * alpha;
      VX[i] *= 0.6; VY[i] *= 0.6;
      X[i] += Math.max(-20, Math.min(20, VX[i])); Y[i] += Math.max(-20, Math.min(20, VY[i]));
    }
  }

  function layout() {
    var start = performance.now();
    while (iter < MAX_ITER && performance.now() - start < SLICE_MS) { step(1 - iter / MAX_ITER); iter++; }
    api.iterations = iter;
    if (iter >= MAX_ITER && !api.settled) {
      api.settled = true; api.settledMs = performance.now(); fit();
    }
    dirty = true;
  }

  function draw() {
    var w = canvas.width, h = canvas.height;
    ctx.setTransform(1, 0, 0, 1, 0, 0); ctx.clearRect(0, 0, w, h);
    ctx.setTransform(dpr * view.k, 0, 0, dpr * view.k, dpr * view.x, dpr * view.y);
    ctx.lineWidth = 0.7 / view.k; ctx.strokeStyle = "rgba(102,112,133,0.25)";
    ctx.beginPath();
    for (var e = 0; e < edges.length; e++) {
      var a = edges[e][0], b = edges[e][1];
      ctx.moveTo(X[a], Y[a]); ctx.lineTo(X[b], Y[b]);
    }
    ctx.stroke();
    var groups = {};
    for (var i = 0; i < N; i++) {
      var g = nodes[i].colour + (nodes[i].faded ? "|f" : "");
      (groups[g] = groups[g] || []).push(i);
    }
    for (var key in groups) {
      var list = groups[key];
      ctx.fillStyle = key.split("|")[0]; ctx.globalAlpha = key.indexOf("|f") > 0 ? 0.25 : 1;
      ctx.beginPath();
      for (var m = 0; m < list.length; m++) {
        var n = list[m], r = radius(n);
        ctx.moveTo(X[n] + r, Y[n]); ctx.arc(X[n], Y[n], r, 0, 2 * Math.PI);
      }
      ctx.fill();
    }
    ctx.globalAlpha = 1;
    if (anchor >= 0) {  // the anchor of a neighbourhood view gets a ring
      ctx.strokeStyle = "#1d2330"; ctx.lineWidth = 2 / view.k;
      ctx.beginPath(); ctx.arc(X[anchor], Y[anchor], radius(anchor) + 3 / view.k, 0, 2 * Math.PI); ctx.stroke();
    }
    labels();
  }

  function radius(n) { return 3 + Math.min(9, Math.sqrt(deg[n])); }

  // titles of the best-linked nodes first, each only where its box (measured, in screen pixels)
  // overlaps no title drawn already; boxes are looked up in a grid of CELL_W x CELL_H px cells
  var CELL_W = 80, CELL_H = 16, PAD = 2;
  function labelText(n) { var t = nodes[n].title || ""; return t.length > 40 ? t.slice(0, 39) + "\u2026" : t; }

  function labels() {
    var W = canvas.width / dpr, H = canvas.height / dpr, shown = 0, boxes = [], grid = new Map();
    if (!labels.order || labels.order.length !== N) {
      labels.order = []; for (var i = 0; i < N; i++) labels.order.push(i);
      labels.order.sort(function (a, b) { return deg[b] - deg[a]; });
      labels.width = new Float32Array(N).fill(-1);
    }
    ctx.save();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = "11px system-ui, sans-serif"; ctx.fillStyle = "#1d2330";
    ctx.strokeStyle = "rgba(255,255,255,0.85)"; ctx.lineWidth = 3; ctx.lineJoin = "round";  // a halo over nodes and links
    for (var j = 0; j < N && shown < 400; j++) {
      var n = labels.order[j], p = toScreen(n), text = labelText(n);
      if (!text || p[0] < 0 || p[1] < 0 || p[0] > W || p[1] > H) continue;
      if (labels.width[n] < 0) labels.width[n] = ctx.measureText(text).width;
      var base = p[1] + 4, box = [p[0] + radius(n) * view.k + 2, base - 10, 0, base + 3];
      box[2] = box[0] + labels.width[n];
      if (overlaps(grid, boxes, box)) continue;
      place(grid, boxes, box);
      ctx.globalAlpha = nodes[n].faded ? 0.4 : 0.9;
      ctx.strokeText(text, box[0], base);
      ctx.fillText(text, box[0], base);
      shown++;
    }
    ctx.restore();
    api.labels = boxes.length;
  }

  function cellsOf(box, each) {
    for (var cy = Math.floor((box[1] - PAD) / CELL_H); cy <= Math.floor((box[3] + PAD) / CELL_H); cy++)
      for (var cx = Math.floor((box[0] - PAD) / CELL_W); cx <= Math.floor((box[2] + PAD) / CELL_W); cx++)
        if (each(cx + "," + cy)) return true;
    return false;
  }

  function overlaps(grid, boxes, box) {
    return cellsOf(box, function (key) {
      var list = grid.get(key) || [];
      for (var m = 0; m < list.length; m++) {
        var o = boxes[list[m]];
        if (box[0] < o[2] + PAD && o[0] < box[2] + PAD && box[1] < o[3] + PAD && o[1] < box[3] + PAD) return true;
      }
      return false;
    });
  }

  function place(grid, boxes, box) {
    boxes.push(box);
    cellsOf(box, function (key) {
      if (!grid.has(key)) grid.set(key, []);
      grid.get(key).push(boxes.length - 1);
      return false;
    });
  }

  function toScreen(n) { return [view.x + view.k * X[n], view.y + view.k * Y[n]]; }

  function nodeAt(px, py) {
    var best = -1, bestD = Infinity;
    for (var i = 0; i < N; i++) {
      var p = toScreen(i), dx = p[0] - px, dy = p[1] - py, d = dx * dx + dy * dy;
      var r = Math.max(6, radius(i) * view.k + 3);
      if (d < r * r && d < bestD) { best = i; bestD = d; }
    }
    return best;
  }

  function frame() {
    if (iter < MAX_ITER) layout();
    // while the layout runs, redraw a few times a second (drawing 5,000 nodes costs more than a
    // layout step); at once when the user pans or zooms
    var now = performance.now();
    if (dirty && (urgent || iter >= MAX_ITER || !api.ready || now - lastDraw > 300)) {
      draw(); lastDraw = performance.now(); api.drawMs = lastDraw - now; dirty = urgent = false;
    }
    if (!api.ready) { api.ready = true; api.readyMs = performance.now(); }
    window.requestAnimationFrame(frame);
  }

  // ---- interaction: drag to pan, wheel to zoom, hover for the title, click to open
  var drag = null;
  canvas.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y, moved: false }; });
  window.addEventListener("mouseup", function () { setTimeout(function () { drag = null; }, 0); });
  canvas.addEventListener("mousemove", function (ev) {
    var r = canvas.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top;
    if (drag && (Math.abs(ev.clientX - drag.x) + Math.abs(ev.clientY - drag.y) > 3)) {
      drag.moved = true; view.x = drag.vx + ev.clientX - drag.x; view.y = drag.vy + ev.clientY - drag.y; dirty = urgent = true;
    }
    var n = nodeAt(px, py);
    if (n >= 0) {
      tip.style.display = "block"; tip.style.left = (px + 12) + "px"; tip.style.top = (py + 8) + "px";
      tip.textContent = nodes[n].title + (nodes[n].type ? " · " + nodes[n].type : "") + (nodes[n].faded ? " · " + nodes[n].status : "");
      canvas.style.cursor = "pointer";
    } else { tip.style.display = "none"; canvas.style.cursor = drag ? "grabbing" : "grab"; }
  });
  canvas.addEventListener("click", function (ev) {
    if (drag && drag.moved) return;
    var r = canvas.getBoundingClientRect(), n = nodeAt(ev.clientX - r.left, ev.clientY - r.top);
    if (n >= 0 && nodes[n].path) window.location.href = "/note?path=" + encodeURIComponent(nodes[n].path);
  });
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = canvas.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top;
    var k = Math.max(0.02, Math.min(20, view.k * Math.exp(-ev.deltaY * 0.0015)));
    view.x = px - (px - view.x) * k / view.k; view.y = py - (py - view.y) * k / view.k; view.k = k; dirty = urgent = true;
  }, { passive: false });
  window.addEventListener("resize", resize);

  // for tests and scripts: where a note is drawn, in page coordinates
  api.pointOf = function (path) {
    for (var i = 0; i < N; i++) if (nodes[i].path === path) {
      var r = canvas.getBoundingClientRect(), p = toScreen(i);
      return { x: r.left + p[0], y: r.top + p[1] };
    }
    return null;
  };
  api.finish = function () { while (iter < MAX_ITER) { step(1 - iter / MAX_ITER); iter++; } layout(); draw(); };

  resize();
  fetch(canvas.getAttribute("data-src"), { credentials: "same-origin" })
    .then(function (r) { return r.json(); })
    .then(function (data) {
      if (data.error) { document.getElementById("graph-info").textContent = data.error; return; }
      api.fetchedMs = performance.now();
      init(data);
      var info = document.getElementById("graph-info");
      if (data.total > N) info.textContent = "showing the " + N + " best-linked of " + data.total + " notes · " + info.textContent;
      window.requestAnimationFrame(frame);
    });
})();
