/// Proleptic Gregorian dates as days since 1970-01-01 and back, by arithmetic alone (no
/// calendar or time-zone database): `mock.fake`'s dates and protobuf's `Timestamp` text.
///
/// ```swift
/// CivilDate.days(year: 2000, month: 3, day: 1)   // 11_017
/// CivilDate.date(days: 11_017)                   // (2000, 3, 1)
/// ```
public enum CivilDate {
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        // Counted from March, so that a leap day ends its year.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    public static func date(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let d = dayOfYear - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
