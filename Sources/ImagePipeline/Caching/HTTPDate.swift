import Foundation

/// HTTP dates: IMF-fixdate and the two obsolete formats a recipient must accept (RFC 9110 §5.6.7).
enum HTTPDate {
    private static let formats = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]
    private static let formatters: [DateFormatter] = formats.map { format in
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        return formatter
    }
    private static let lock = NSLock()

    static func parse(_ text: String) -> Date? {
        let trimmed = text.trimmingSpaces
        // DateFormatter is not thread-safe on every platform.
        return lock.withLock { formatters.lazy.compactMap { $0.date(from: trimmed) }.first }
    }

    static func format(_ date: Date) -> String {
        lock.withLock { formatters[0].string(from: date) }
    }
}
