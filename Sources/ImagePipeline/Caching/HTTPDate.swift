import Foundation

/// HTTP dates: IMF-fixdate and the two obsolete formats a recipient must accept (RFC 9110
/// §5.6.7), always GMT.
///
/// Read from the bytes rather than with `DateFormatter`: every download's `Date` and
/// `Last-Modified` go through here, and `DateFormatter` (ICU behind a process-wide lock) took
/// 2.6% of `serve`'s CPU under load. The formats are fixed, so the parser is strict: what does
/// not match exactly, or names a day the month does not have, is no date (the response then
/// counts as having none, which RFC 9111 §4.2 asks of an invalid one).
package enum HTTPDate {
    package static func parse(_ text: String) -> Date? {
        var reader = Reader(bytes: ArraySlice(text.trimmingSpaces.utf8))
        return reader.date()
    }

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), whole seconds.
    package static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let (days, time) = (seconds.floorDivided(by: 86_400), seconds.floorModulo(86_400))
        let (year, month, day) = civil(fromDays: days)
        let weekday = weekdays[(days + 4).floorModulo(7)] // 1970-01-01 was a Thursday.
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let clock = "\(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60))"
        let paddedYear = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(weekday), \(two(day)) \(months[month - 1]) \(paddedYear) \(clock) GMT"
    }

    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let longWeekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// A cursor over one header value.
    private struct Reader {
        var bytes: ArraySlice<UInt8>

        mutating func date() -> Date? {
            let start = bytes
            if let date = imfFixdate() { return date }
            bytes = start
            if let date = rfc850Date() { return date }
            bytes = start
            return asctimeDate()
        }

        /// `Sun, 06 Nov 1994 08:49:37 GMT`
        private mutating func imfFixdate() -> Date? {
            guard word(in: weekdays) != nil, literal(", "), let day = digits(2), literal(" "), let month = word(in: months),
                literal(" "), let year = digits(4), literal(" "), let time = clock(), literal(" GMT"), bytes.isEmpty
            else { return nil }
            return HTTPDate.date(year: year, month: month + 1, day: day, seconds: time)
        }

        /// `Sunday, 06-Nov-94 08:49:37 GMT`: a two-digit year more than 50 years ahead is the
        /// last such year in the past (RFC 9110 §5.6.7).
        private mutating func rfc850Date() -> Date? {
            guard word(in: longWeekdays) != nil, literal(", "), let day = digits(2), literal("-"), let month = word(in: months),
                literal("-"), let shortYear = digits(2), literal(" "), let time = clock(), literal(" GMT"), bytes.isEmpty
            else { return nil }
            let thisYear = HTTPDate.civil(fromDays: Int(Date().timeIntervalSince1970).floorDivided(by: 86_400)).year
            var year = thisYear - thisYear % 100 + shortYear
            if year > thisYear + 50 { year -= 100 }
            return HTTPDate.date(year: year, month: month + 1, day: day, seconds: time)
        }

        /// `Sun Nov  6 08:49:37 1994` (the day padded with a space).
        private mutating func asctimeDate() -> Date? {
            guard word(in: weekdays) != nil, literal(" "), let month = word(in: months), literal(" ") else { return nil }
            let day: Int
            if literal(" ") {
                guard let digit = digits(1) else { return nil }
                day = digit
            } else {
                guard let twoDigits = digits(2) else { return nil }
                day = twoDigits
            }
            guard literal(" "), let time = clock(), literal(" "), let year = digits(4), bytes.isEmpty else { return nil }
            return HTTPDate.date(year: year, month: month + 1, day: day, seconds: time)
        }

        /// `HH:MM:SS` as seconds into the day (a leap second, :60, allowed).
        private mutating func clock() -> Int? {
            guard let hour = digits(2), literal(":"), let minute = digits(2), literal(":"), let second = digits(2),
                hour < 24, minute < 60, second <= 60
            else { return nil }
            return hour * 3600 + minute * 60 + second
        }

        private mutating func digits(_ count: Int) -> Int? {
            guard bytes.count >= count else { return nil }
            var value = 0
            for byte in bytes.prefix(count) {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            bytes = bytes.dropFirst(count)
            return value
        }

        private mutating func literal(_ text: StaticString) -> Bool {
            let expected = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
            guard bytes.starts(with: expected) else { return false }
            bytes = bytes.dropFirst(expected.count)
            return true
        }

        /// The index of the word of `words` the bytes start with (case-sensitive, as RFC 9110's
        /// grammar is).
        private mutating func word(in words: [String]) -> Int? {
            for (index, word) in words.enumerated() where bytes.starts(with: word.utf8) {
                bytes = bytes.dropFirst(word.utf8.count)
                return index
            }
            return nil
        }
    }

    private static func date(year: Int, month: Int, day: Int, seconds: Int) -> Date? {
        guard day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(days(fromYear: year, month: month, day: day) * 86_400 + seconds))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date, and back: the era arithmetic of
    /// Howard Hinnant's `days_from_civil` (400-year eras starting in March).
    private static func days(fromYear year: Int, month: Int, day: Int) -> Int {
        let year = month <= 2 ? year - 1 : year
        let era = year.floorDivided(by: 400)
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = shifted.floorDivided(by: 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int {
    fileprivate func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    fileprivate func floorModulo(_ divisor: Int) -> Int { self - floorDivided(by: divisor) * divisor }
}
