/// The fixed look of an audit report (docs/REPORTS.md): one style sheet inside the file, for the screen at any
/// width and zoom, and for print on A4 or Letter, each section on a new page and the timeline scaled to the page.
enum ReportStyle {
    static let css = """
        :root { --ink: #1f2328; --muted: #59636e; --rule: #d1d9e0; --band: #f6f8fa;
          --messages: #0b57d0; --in-person: #7a3db8; --by-default: #9a6700; --observation: #1a7f37;
          --erased: #6e7781; --granted: #1a7f37; --refused: #cf222e; --other: #6e7781; }
        * { box-sizing: border-box; }
        html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
          color: var(--ink); background: #fff; line-height: 1.45; }
        body { margin: 0 auto; padding: 1.5rem 1rem 3rem; max-width: 72rem; }
        h1 { font-size: 1.7rem; margin: 0 0 .3rem; }
        h2 { font-size: 1.3rem; margin: 2.2rem 0 .6rem; padding-bottom: .25rem; border-bottom: 2px solid var(--rule); }
        h3 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
        p, li, dd { max-width: 48rem; }
        .lede { font-size: 1.05rem; color: var(--muted); margin-top: 0; }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 1rem 0; }
        dl.facts dt { font-weight: 600; }
        dl.facts dd { margin: 0; overflow-wrap: anywhere; }
        nav ol { columns: 2; padding-left: 1.2rem; }
        code, pre, bdi, .value { font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: .92em; }
        .value, code, bdi { overflow-wrap: anywhere; }
        tr.day th { background: #fff; border-left: none; border-right: none; padding-top: .7rem; font-size: 1rem; }
        pre { background: var(--band); border: 1px solid var(--rule); padding: .6rem .8rem; overflow-x: auto;
          white-space: pre-wrap; overflow-wrap: anywhere; }
        .scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; margin: .4rem 0 1rem; font-size: .93rem; }
        caption { text-align: left; font-weight: 600; padding: .3rem 0; }
        th, td { border: 1px solid var(--rule); padding: .3rem .5rem; text-align: left; vertical-align: top; }
        th { background: var(--band); }
        td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
        .erased { color: var(--erased); font-style: italic; }
        .status { font-weight: 600; }
        .status.ok::before { content: "✓ "; }
        .status.failed { color: var(--refused); }
        .status.failed::before { content: "✗ "; }
        .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(13rem, 1fr)); gap: .8rem; margin: .8rem 0; }
        .card { border: 1px solid var(--rule); border-radius: 6px; padding: .6rem .8rem; }
        .card h3 { margin: 0 0 .3rem; font-size: .95rem; color: var(--muted); }
        .card .big { font-size: 1.6rem; font-weight: 700; }
        .card ul { margin: .2rem 0 0; padding-left: 1.1rem; }
        .legend { display: flex; flex-wrap: wrap; gap: .4rem 1.2rem; padding: 0; list-style: none; margin: .4rem 0; }
        .legend svg { vertical-align: middle; margin-right: .3rem; }
        .chart { overflow-x: auto; border: 1px solid var(--rule); padding: .3rem; }
        svg.timeline { display: block; width: 100%; min-width: 44rem; height: auto; font-size: 11px; }
        svg.swatch { display: inline; width: 30px; height: 16px; font-size: 11px; }
        svg text { fill: var(--ink); }
        svg .tick { fill: var(--muted); font-size: 10px; }
        svg .grid { stroke: var(--rule); stroke-width: 1; }
        svg .lane-heading { font-weight: 700; font-size: 12px; }
        svg .lane-note { fill: var(--muted); font-style: italic; }
        svg .lane-label { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
        svg .erased-label { fill: var(--erased); font-style: italic; }
        svg .lane-line { stroke: var(--rule); stroke-dasharray: 2 3; }
        svg .bar-letter { font-size: 10px; font-weight: 700; fill: #fff; pointer-events: none; }
        svg .source-messages rect { fill: var(--messages); }
        svg .source-inPerson rect { fill: url(#hatch); stroke: var(--in-person); stroke-width: 1.5; }
        svg .source-inPerson .bar-letter { fill: var(--in-person); }
        svg .source-byDefault rect { fill: url(#dots); stroke: var(--by-default); stroke-width: 1.5; }
        svg .source-byDefault .bar-letter { fill: var(--by-default); }
        svg .source-observation rect { fill: #fff; stroke: var(--observation); stroke-width: 2; }
        svg .source-observation .bar-letter { fill: var(--observation); }
        svg .source-erased rect { fill: url(#hatch); stroke: var(--erased); stroke-width: 1.5; opacity: .7; }
        svg .source-erased .bar-letter { fill: var(--erased); }
        svg .hatch-ground, svg .dots-ground { fill: #fff; }
        svg .hatch-line { stroke: var(--in-person); stroke-width: 2; }
        svg .dots-dot { fill: var(--by-default); }
        svg .source-erased .hatch-line { stroke: var(--erased); }
        svg .lapse { font-size: 10px; fill: var(--refused); font-weight: 600; }
        svg .mark.asked path { fill: none; stroke: var(--ink); stroke-width: 1.5; }
        svg .mark text { font-size: 11px; font-weight: 700; }
        svg .state-authorized rect, svg .state-limited rect, svg .state-provisional rect { fill: var(--granted); }
        svg .state-denied rect, svg .state-doNotAskAgain rect, svg .state-restricted rect { fill: url(#hatch); stroke: var(--refused); stroke-width: 1.5; }
        svg .state-denied .bar-letter, svg .state-doNotAskAgain .bar-letter, svg .state-restricted .bar-letter { fill: var(--refused); }
        svg .state-notDetermined rect, svg .state-askAgain rect, svg .state-unsupported rect { fill: #fff; stroke: var(--other); stroke-width: 1.5; }
        svg .state-notDetermined .bar-letter, svg .state-askAgain .bar-letter, svg .state-unsupported .bar-letter { fill: var(--other); }
        footer { margin-top: 3rem; color: var(--muted); font-size: .9rem; border-top: 1px solid var(--rule); padding-top: .6rem; }
        @media (max-width: 40rem) {
          body { padding: 1rem .6rem 2rem; }
          h1 { font-size: 1.35rem; }
          nav ol { columns: 1; }
          dl.facts { grid-template-columns: 1fr; }
          dl.facts dd { margin-bottom: .4rem; }
        }
        @page { margin: 14mm 12mm; }
        @media print {
          html { font-size: 9.5pt; }
          body { max-width: none; padding: 0; }
          nav { display: none; }
          section { break-before: page; }
          section:first-of-type { break-before: auto; }
          h2, h3, caption { break-after: avoid; }
          tr, .card, pre { break-inside: avoid; }
          thead { display: table-header-group; }
          .chart { overflow: visible; border: none; padding: 0; }
          svg.timeline { min-width: 0; width: 100%; }
          .scroll { overflow: visible; }
          a { color: inherit; text-decoration: none; }
        }
        """
}
