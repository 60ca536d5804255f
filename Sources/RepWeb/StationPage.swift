/// The one page repd-web serves: HTML, CSS and a little JavaScript, all here (no CDN, no build step, works offline).
///
/// It opens `/events` (Server-Sent Events), keeps every station's last state, and shows one station: the rep count
/// in digits a person reads from three metres, the set number, bars per rep, the sets done, and banners when the
/// sensor is lost, repd is not running or the page has lost repd-web. `?station=NAME` picks a station (without it,
/// several stations are shown side by side); `?theme=dark|light` overrides the system's colour scheme.
///
/// When several reps arrive at once (repd announces a set's first reps together when the set is established), the
/// count steps through each of them 120 ms apart, so every number is shown.
public enum StationPage {
    /// The page.
    public static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="dark light">
        <title>repd</title>
        <style>
        :root {
          --bg: #0c0f13; --fg: #f4f6f8; --muted: #8b95a5; --card: #171c23; --line: #262d37;
          --live: #34d17e; --warn: #ffb020; --bad: #ff5252; --bar: #4f8cff; --bar-last: #8fb4ff;
        }
        @media (prefers-color-scheme: light) {
          :root:not([data-theme="dark"]) {
            --bg: #f6f6f3; --fg: #0d1117; --muted: #59616d; --card: #ffffff; --line: #dcdfe3;
            --live: #0b8a47; --warn: #b86e00; --bad: #c62828; --bar: #2f6fde; --bar-last: #0d47a1;
          }
        }
        :root[data-theme="light"] {
          --bg: #f6f6f3; --fg: #0d1117; --muted: #59616d; --card: #ffffff; --line: #dcdfe3;
          --live: #0b8a47; --warn: #b86e00; --bad: #c62828; --bar: #2f6fde; --bar-last: #0d47a1;
        }
        * { box-sizing: border-box; }
        html, body { margin: 0; height: 100%; }
        body {
          background: var(--bg); color: var(--fg); display: flex; flex-direction: column; overflow: hidden;
          font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
        }
        .banner { display: none; padding: 1.4vh 3vw; font-size: max(3.6vh, 18px); font-weight: 700; text-align: center; }
        .banner.on { display: block; }
        #offline { background: #4a4f57; color: #fff; }
        #repd-down { background: var(--bad); color: #fff; }
        #sensor-lost { background: var(--warn); color: #111; }
        header {
          display: flex; align-items: center; justify-content: space-between; gap: 2vw;
          padding: 2.2vh 3vw 0; font-size: max(3.6vh, 16px); color: var(--muted);
        }
        #station { font-weight: 700; color: var(--fg); }
        #state { display: flex; align-items: center; gap: 1vw; }
        #dot { width: 2.4vh; height: 2.4vh; border-radius: 50%; background: var(--muted); display: inline-block; }
        #dot.live { background: var(--live); } #dot.warn { background: var(--warn); } #dot.bad { background: var(--bad); }
        main { flex: 1; min-height: 0; display: flex; flex-direction: column; align-items: center; justify-content: center; }
        #set-label { font-size: max(8vh, 28px); font-weight: 800; letter-spacing: .06em; text-transform: uppercase; }
        #count {
          font-size: min(50vh, 62vw); line-height: .92; font-weight: 800; font-variant-numeric: tabular-nums;
          letter-spacing: -.02em; transition: color .3s;
        }
        #phase { font-size: max(4.4vh, 18px); color: var(--muted); margin-top: .5vh; }
        body.done #count { color: var(--live); }
        body.stale #count, body.stale #set-label { color: var(--muted); opacity: .45; }
        #bars { display: flex; gap: 4vw; justify-content: center; width: 94vw; margin-top: 2vh; }
        #bars:empty { display: none; }
        .metric { flex: 1; max-width: 46vw; }
        .metric h2 { margin: 0 0 .8vh; font-size: max(2.6vh, 13px); font-weight: 600; color: var(--muted); display: flex; justify-content: space-between; }
        .metric h2 b { color: var(--fg); }
        .row { display: flex; align-items: flex-end; gap: .5vw; height: 9vh; border-bottom: 2px solid var(--line); }
        .row span { flex: 1; max-width: 4vw; background: var(--bar); border-radius: .6vh .6vh 0 0; min-height: 2px; }
        .row span:last-child { background: var(--bar-last); }
        footer {
          display: flex; align-items: center; gap: 1.4vw; flex-wrap: wrap; padding: 2.4vh 3vw 3vh;
          font-size: max(3.8vh, 16px); min-height: 11vh;
        }
        footer .label { color: var(--muted); margin-right: .6vw; }
        .chip { background: var(--card); border: 1px solid var(--line); border-radius: 1.2vh; padding: .6vh 1.4vw; }
        .chip span { color: var(--muted); font-size: .8em; text-transform: uppercase; letter-spacing: .04em; }
        .chip b { font-size: 1.3em; font-variant-numeric: tabular-nums; margin-left: 1vw; }
        #grid { display: none; flex: 1; min-height: 0; gap: 2vw; padding: 3vh 3vw; flex-wrap: wrap; align-content: stretch; }
        body.overview #grid { display: flex; }
        body.overview main, body.overview footer, body.overview #bars { display: none; }
        .tile {
          flex: 1 1 28vw; background: var(--card); border: 1px solid var(--line); border-radius: 2vh; padding: 2vh 2vw;
          color: inherit; text-decoration: none; display: flex; flex-direction: column; align-items: center;
          justify-content: center;
        }
        .tile .name { font-size: 4vh; font-weight: 700; }
        .tile .n { font-size: min(36vh, 20vw); font-weight: 800; line-height: 1; font-variant-numeric: tabular-nums; }
        .tile.lost .sub { color: var(--warn); } .tile.down .sub { color: var(--bad); }
        .tile .sub { font-size: 3.4vh; color: var(--muted); }
        </style>
        </head>
        <body class="stale">
        <div id="offline" class="banner on">Display offline — reconnecting…</div>
        <div id="repd-down" class="banner">repd is not running — waiting for it to come back</div>
        <div id="sensor-lost" class="banner">Sensor lost — check the sensor</div>
        <header><span id="station">repd</span><span id="state"><span id="dot"></span><span id="state-text">connecting</span><span id="clock"></span></span></header>
        <div id="grid"></div>
        <main>
          <div id="set-label">Set –</div>
          <div id="count" data-set="" data-in-set="false">0</div>
          <div id="phase">waiting for the first set</div>
          <div id="bars"></div>
        </main>
        <footer id="history"><span class="label">Sets done</span><span id="none" class="label">none yet</span></footer>
        <noscript><p style="text-align:center">This page needs JavaScript to receive live updates.</p></noscript>
        <script>
        "use strict";
        const params = new URLSearchParams(location.search);
        const theme = params.get("theme");
        if (theme === "dark" || theme === "light") document.documentElement.dataset.theme = theme;
        const wanted = params.get("station");
        const $ = (id) => document.getElementById(id);
        const stations = new Map();
        let online = false, lastMessage = Date.now(), source = null;
        let shownSet = null, shownCount = null, target = 0, ticker = null;

        const labels = { duration: ["rep time", "s", 1], mean_velocity_m_s: ["mean velocity", "m/s", 2],
          peak_velocity_m_s: ["peak velocity", "m/s", 2], rom_m: ["range of motion", "m", 2],
          eccentric_s: ["down", "s", 1], concentric_s: ["up", "s", 1], pause_bottom_s: ["pause at the bottom", "s", 1],
          pause_top_s: ["pause at the top", "s", 1], velocity_loss_pct: ["velocity loss", "%", 0],
          amplitude: ["amplitude", "g", 2] };
        // The bars: the bar's velocity and range of motion when the reps carry them (placement "bar"), else the rep
        // time and its tempo (down, up); measures of later versions fill the rest, up to three.
        const barMeasures = ["mean_velocity_m_s", "rom_m", "peak_velocity_m_s"];
        const tempoMeasures = ["duration", "eccentric_s", "concentric_s"];
        function label(name) { return labels[name] || [name.replace(/_/g, " "), "", 2]; }

        function connect() {
          if (source) source.close();
          source = new EventSource("events");
          source.onmessage = (e) => {
            lastMessage = Date.now();
            let s = JSON.parse(e.data);
            // A restarted repd-web knows nothing until it has heard from repd: keep showing what was known meanwhile.
            const before = stations.get(s.index);
            if (s.set === null && before && before.set !== null) s = Object.assign({}, before, { repd: s.repd, repd_problem: s.repd_problem, station: s.station });
            stations.set(s.index, s);
            setOnline(true);
            render();
          };
          source.addEventListener("ping", () => { lastMessage = Date.now(); setOnline(true); });
          source.onerror = () => {
            setOnline(false);
            if (source.readyState === EventSource.CLOSED) setTimeout(connect, 2000);
          };
        }
        // A connection that went silent (no ping for 25 s) is dead even if the browser has not noticed.
        setInterval(() => { if (Date.now() - lastMessage > 25000) { lastMessage = Date.now(); setOnline(false); connect(); } }, 5000);
        function tick() { $("clock").textContent = new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }); }
        tick();
        setInterval(tick, 1000);

        function setOnline(value) {
          if (online === value) return;
          online = value;
          $("offline").classList.toggle("on", !online);
          render();
        }

        function choose() {
          const all = [...stations.values()].sort((a, b) => a.index - b.index);
          if (wanted !== null) return { station: all.find((s) => s.station === wanted) || null, all };
          return { station: all.length === 1 ? all[0] : null, all };
        }

        function render() {
          const { station, all } = choose();
          const overview = station === null && all.length > 1 && wanted === null;
          document.body.classList.toggle("overview", overview);
          if (overview) {
            renderGrid(all);
            const down = all.filter((s) => s.repd !== "up").length, lost = all.filter((s) => s.repd === "up" && sensorLost(s)).length;
            const problem = all.find((s) => s.repd === "down" && s.repd_problem);
            setBanners(down > 0, lost > 0, problem ? problem.station + ": " + problem.repd_problem : null);
            $("dot").className = !online ? "" : down ? "bad" : lost ? "warn" : "live";
            $("state-text").textContent = !online ? "no connection" : down ? down + " offline" : lost ? lost + " sensor lost" : "all live";
            return;
          }
          if (station === null) {
            $("station").textContent = wanted !== null ? "no station named “" + wanted + "”" : "repd";
            setBanners(false, false);
            return;
          }
          document.title = "repd · " + station.station;
          $("station").textContent = station.station;
          const up = station.repd === "up";
          setBanners(station.repd === "down", up && sensorLost(station), station.repd_problem);
          const dot = $("dot");
          dot.className = !online ? "" : !up ? "bad" : sensorLost(station) ? "warn" : station.sensor === null ? "" : "live";
          $("state-text").textContent = !online ? "no connection" : !up ? (station.repd === "down" ? "repd offline" : "connecting")
            : sensorLost(station) ? "sensor lost" : station.sensor === "polling" ? "sensor live (polling)" : "sensor live";
          $("set-label").textContent = station.set === null ? "Set –" : "Set " + station.set;
          document.body.classList.toggle("done", station.set !== null && !station.in_set);
          document.body.classList.toggle("stale", !online || !up);
          $("phase").textContent = station.set === null ? "waiting for the first set"
            : station.in_set ? (station.count === 1 ? "rep" : "reps") : "set done · resting";
          showCount(station);
          renderBars(station);
          renderHistory(station);
        }

        function sensorLost(s) { return s.sensor === "lost" || s.sensor === "error"; }

        function setBanners(down, lost, problem) {
          $("repd-down").textContent = problem ? "repd-web cannot read repd: " + problem
            : "repd is not running — waiting for it to come back";
          $("repd-down").classList.toggle("on", down);
          $("sensor-lost").classList.toggle("on", lost);
        }

        function setCount(value, set, inSet) {
          const el = $("count");
          if (shownCount === value && shownSet === set) { el.dataset.inSet = String(inSet); return; }
          el.dataset.set = set === null ? "" : String(set);
          el.dataset.inSet = String(inSet);
          shownCount = value;
          shownSet = set;
          el.textContent = String(value);
        }

        // Several reps at once: show each, 120 ms apart. A new set, a correction or the first state: show it at once.
        function showCount(s) {
          if (shownCount === null || s.set !== shownSet && !s.in_set) { stop(); setCount(s.count, s.set, s.in_set); return; }
          if (s.set !== shownSet) { stop(); setCount(0, s.set, true); }
          target = s.count;
          if (!s.in_set || target < shownCount) { stop(); setCount(target, s.set, s.in_set); return; }
          $("count").dataset.inSet = String(s.in_set);
          if (ticker === null) step();
        }
        function step() {
          if (shownCount < target) setCount(shownCount + 1, shownSet, true);
          ticker = shownCount < target ? setTimeout(step, 120) : null;
        }
        function stop() { if (ticker !== null) { clearTimeout(ticker); ticker = null; } }

        function renderBars(s) {
          const bars = $("bars");
          const names = [];
          for (const rep of s.reps) for (const name of Object.keys(rep.metrics)) if (!names.includes(name)) names.push(name);
          const preferred = barMeasures.some((n) => names.includes(n)) ? barMeasures : tempoMeasures;
          const unknown = names.filter((n) => !(n in labels));
          const show = preferred.filter((n) => names.includes(n)).concat(unknown).slice(0, 3);
          bars.replaceChildren();
          if (s.reps.length === 0) return;
          for (const name of show) {
            const values = s.reps.map((r) => r.metrics[name]).filter((v) => typeof v === "number");
            if (values.length === 0) continue;
            const [text, unit, digits] = label(name);
            const max = Math.max(...values.map(Math.abs)) || 1;
            const box = document.createElement("div");
            box.className = "metric";
            box.dataset.metric = name;
            const h = document.createElement("h2");
            const caption = document.createElement("span");
            caption.textContent = text;
            const last = document.createElement("b");
            last.textContent = values[values.length - 1].toFixed(digits) + (unit ? " " + unit : "");
            h.append(caption, last);
            const row = document.createElement("div");
            row.className = "row";
            for (const v of values.slice(-30)) {
              const bar = document.createElement("span");
              bar.style.height = Math.max(3, 100 * Math.abs(v) / max) + "%";
              bar.title = v.toFixed(digits) + " " + unit;
              row.append(bar);
            }
            box.append(h, row);
            bars.append(box);
          }
        }

        function renderHistory(s) {
          const footer = $("history");
          footer.querySelectorAll(".chip").forEach((c) => c.remove());
          $("none").style.display = s.sets.length ? "none" : "";
          for (const set of s.sets.slice(-12)) {
            const chip = document.createElement("span");
            chip.className = "chip";
            chip.dataset.set = set.set;
            chip.dataset.reps = set.reps;
            const name = document.createElement("span");
            name.textContent = "Set " + set.set;
            chip.append(name);
            const n = document.createElement("b");
            n.textContent = set.reps;
            chip.append(n);
            footer.append(chip);
          }
        }

        function renderGrid(all) {
          const grid = $("grid");
          grid.replaceChildren();
          $("station").textContent = "repd · " + all.length + " stations";
          for (const s of all) {
            const a = document.createElement("a");
            a.className = "tile";
            const link = new URLSearchParams(location.search);
            link.set("station", s.station);
            a.href = "?" + link.toString();
            const name = document.createElement("div"); name.className = "name"; name.textContent = s.station;
            const n = document.createElement("div"); n.className = "n"; n.textContent = s.count;
            a.classList.toggle("down", s.repd !== "up");
            a.classList.toggle("lost", s.repd === "up" && sensorLost(s));
            const sub = document.createElement("div"); sub.className = "sub";
            sub.textContent = (s.set === null ? "no set yet" : "set " + s.set + (s.in_set ? "" : " done"))
              + " · " + (s.repd !== "up" ? "repd offline" : sensorLost(s) ? "sensor lost" : "live");
            a.append(name, n, sub);
            grid.append(a);
          }
        }

        connect();
        </script>
        </body>
        </html>
        """#
}
