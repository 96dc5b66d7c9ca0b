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
}
