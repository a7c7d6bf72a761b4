import ArgumentParser
import Foundation

/// A byte count given as `300000`, `300KB`, `300KiB`, `1.5MB`, `2MiB`, `1GB`, `1GiB`; at least one byte.
struct ByteCount: ExpressibleByArgument, CustomStringConvertible {
    var bytes: Int

    init(bytes: Int) { self.bytes = bytes }

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces).lowercased()
        // Longest suffixes first: "kib" before "b".
        let units: [(String, Double)] = [
            ("kib", 1024), ("mib", 1024 * 1024), ("gib", 1024 * 1024 * 1024), ("kb", 1000), ("mb", 1_000_000),
            ("gb", 1_000_000_000), ("k", 1000), ("b", 1)
        ]
        var multiplier = 1.0
        var number = Substring(text)
        for (suffix, value) in units where text.hasSuffix(suffix) {
            multiplier = value
            number = text.dropLast(suffix.count)
            break
        }
        // "0.5" would round to 0 bytes: below one byte is a usage mistake, not a budget.
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value.isFinite, value * multiplier >= 1,
            value * multiplier < Double(Int.max)
        else {
            return nil
        }
        bytes = Int(value * multiplier)
    }

    /// As a user would type it: `300KB` rather than `300000`.
    var description: String {
        for (suffix, unit) in [("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1000), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        where bytes % unit == 0 {
            return "\(bytes / unit)\(suffix)"
        }
        return "\(bytes)"
    }

    var defaultValueDescription: String { description }
}
