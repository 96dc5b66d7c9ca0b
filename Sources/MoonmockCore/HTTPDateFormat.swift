#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The HTTP date format (RFC 9110 §5.6.7, IMF-fixdate), shared by the server's `Date` field and
/// the one the in-process protocol adds, so that both doors spell it alike.
public enum HTTPDateFormat {
    /// `Sun, 06 Nov 1994 08:49:37 GMT` for `seconds` since 1970.
    ///
    /// ```swift
    /// HTTPDateFormat.imfFixdate(784_111_777)   // "Sun, 06 Nov 1994 08:49:37 GMT"
    /// ```
    public static func imfFixdate(_ seconds: Int) -> String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// The seconds since 1970 of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`); `nil` for
    /// anything else (the obsolete RFC 850 and asctime forms included).
    ///
    /// ```swift
    /// HTTPDateFormat.parse("Sun, 06 Nov 1994 08:49:37 GMT")   // 784_111_777
    /// ```
    public static func parse(_ text: String) -> Int? {
        let parts = text.trimmingSpaces.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
              let day = Int(parts[1]), let month = months.firstIndex(of: String(parts[2])), let year = Int(parts[3]) else { return nil }
        let clock = parts[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (1...31).contains(day), (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2])
        else { return nil }
        let days = Int(CivilDate.days(year: Int64(year), month: Int64(month + 1), day: Int64(day)))
        return days * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]
    }
}
