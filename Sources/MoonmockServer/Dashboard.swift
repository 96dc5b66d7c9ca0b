import Foundation

/// The dashboard at `GET /__moonmock/`: one self-contained page (no framework, no build step,
/// nothing fetched but the admin API) that follows the server through `GET /__moonmock/events`.
///
/// Its parts are files in `Dashboard/` that editors, linters and diffs see as what they are:
/// `index.html` (the markup; it opens in a browser as it is), `dashboard.css`, and the script
/// in four pieces (`core.js`: the admin API, signing in, the live feed, tabs and keys;
/// `requests.js`: the request list; `inspector.js`: one request whole; `panels.js`: rules,
/// variants, bundles and state). SwiftPM embeds them in the binary (`.embedInCode`); the page
/// served inlines the style and the scripts, so it is still one answer.
///
/// ```swift
/// Dashboard.html.hasPrefix("<!doctype html>")   // true
/// ```
enum Dashboard {
    static let html: String = {
        func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
        var page = text(PackageResources.index_html)
        page = page.replacingOccurrences(of: #"<link rel="stylesheet" href="dashboard.css">"#,
                                         with: "<style>\n" + text(PackageResources.dashboard_css) + "</style>")
        var script = "<script>\n'use strict';\n"
        for (name, bytes) in [("core.js", PackageResources.core_js), ("requests.js", PackageResources.requests_js),
                              ("inspector.js", PackageResources.inspector_js), ("panels.js", PackageResources.panels_js)] {
            page = page.replacingOccurrences(of: "<script src=\"\(name)\"></script>\n", with: "")
            script += text(bytes)
        }
        page = page.replacingOccurrences(of: "<script>start();</script>", with: script + "start();\n</script>")
        return page
    }()
}
