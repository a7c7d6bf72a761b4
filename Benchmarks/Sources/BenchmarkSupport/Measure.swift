import Foundation

/// Timing helpers: nanosecond clock, medians and percentiles.
public enum Measure {
    public static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Median over `rounds` of the nanoseconds per operation of `body`, which does `operations`.
    public static func nanosecondsPerOperation(rounds: Int = 9, operations: Int, _ body: () -> Void) -> Double {
        let samples = (0..<rounds).map { _ in
            let start = now()
            body()
            return Double(now() - start) / Double(operations)
        }
        return median(samples)
    }

    public static func median(_ values: [Double]) -> Double { percentile(values, 0.5) }

    /// Smallest and largest, for showing the spread beside a median.
    public static func range(_ values: [Double]) -> (min: Double, max: Double) {
        (values.min() ?? .nan, values.max() ?? .nan)
    }

    public static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction + 0.5))]
    }

    /// p50 and p99 of single operations, each timed on its own (clock overhead included).
    public static func latency(samples: Int, _ operation: (Int) -> Void) -> (p50: Double, p99: Double) {
        var timings = [Double](repeating: 0, count: samples)
        for index in 0..<samples {
            let start = now()
            operation(index)
            timings[index] = Double(now() - start)
        }
        return (percentile(timings, 0.5), percentile(timings, 0.99))
    }

    /// The cost of reading the clock twice, reported beside latencies.
    public static var clockOverhead: Double { latency(samples: 100_000) { _ in }.p50 }
}

/// NSCache is documented as thread-safe but is not marked Sendable on Linux.
public final class NSCacheReference: @unchecked Sendable {
    public let cache = NSCache<NSString, NSData>()
    public let keys: [NSString]

    public init(keys: [String]) { self.keys = keys.map { $0 as NSString } }
}

/// The photos a report runs on.
public enum Photos {
    /// Each path that is a directory stands for its `.jpg` and `.png` files, sorted by name; any
    /// other path stands for itself.
    public static func files(_ paths: [String]) -> [URL] {
        paths.flatMap { path -> [URL] in
            let url = URL(fileURLWithPath: path)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [url] }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            return names.filter { [".jpg", ".png"].contains(where: $0.lowercased().hasSuffix) }.sorted().map { url.appendingPathComponent($0) }
        }
    }
}
