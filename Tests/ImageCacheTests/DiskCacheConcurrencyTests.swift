import Foundation
import Testing
import TestSupport
@testable import ImageCache

@Suite("Disk cache concurrency")
struct DiskCacheConcurrencyTests {
    @Test("many tasks storing, reading and verifying under constant eviction get only whole, correct entries")
    func stress() async throws {
        let directory = try TemporaryDirectory()
        // The working set (40 keys of 5-9 KB, about 280 KB) is far over the limit, so stores evict all the time.
        let limit = 100_000
        let cache = try DiskCacheFixture.open(directory, limit: limit)
        let errors = await withTaskGroup(of: [String].self) { group in
            for worker in 0..<6 {
                group.addTask {
                    var errors: [String] = []
                    for step in 0..<150 {
                        let key = (step * 5 + worker) % 40
                        do {
                            if step % 3 == 0 {
                                try cache.setValue(payload(key, size: 5000 + key * 100), forKey: "k\(key)")
                            } else if worker == 0 && step % 50 == 1 {
                                let report = try cache.verify()
                                if !report.corrupt.isEmpty { errors.append("verify found corrupt entries: \(report.corrupt)") }
                            } else if let data = try cache.value(forKey: "k\(key)"), data != payload(key, size: 5000 + key * 100) {
                                errors.append("k\(key) read back different bytes")
                            }
                        } catch {
                            errors.append("worker \(worker) step \(step): \(error)")
                        }
                    }
                    return errors
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(errors.isEmpty, "\(errors.prefix(5))")
        let statistics = cache.statistics
        #expect(statistics.counters.evictions >= 10, "the test must exercise eviction")
        #expect(statistics.totalBytes <= limit)
        #expect(statistics.totalBytes == DiskCacheFixture.bytesOnDisk(directory.url))
        #expect(DiskCacheFixture.entryFiles(directory).count == statistics.count)
        #expect(DiskCacheFixture.temporaryFiles(directory).isEmpty)
        let report = try cache.verify()
        #expect(report.corrupt.isEmpty && report.orphans.isEmpty && report.missing.isEmpty)
    }
}
