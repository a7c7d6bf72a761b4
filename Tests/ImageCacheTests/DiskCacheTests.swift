import Foundation
import Testing
import TestSupport
@testable import ImageCache

@Suite("Disk cache")
struct DiskCacheTests {
    static func open(_ directory: TemporaryDirectory, limit: Int = 1 << 30, fileSystem: any CacheFileSystem = POSIXFileSystem(),
                     clock: any CacheClock = SystemClock()) throws -> DiskCache {
        try DiskCache(directory: directory.url.path, configuration: DiskCacheConfiguration(sizeLimit: limit),
                      fileSystem: fileSystem, clock: clock)
    }

    static func entryFiles(_ directory: TemporaryDirectory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.url.path + "/entries")) ?? []).sorted()
    }

    @Test("stores and returns bytes and metadata, across reopening")
    func roundTrip() throws {
        let directory = try TemporaryDirectory()
        let metadata = DiskCacheMetadata(contentType: "image/jpeg", etag: "\"abc\"", lastModified: "Tue, 15 Nov 1994 12:45:26 GMT",
                                         expires: Date(timeIntervalSince1970: 4_000_000_000))
        do {
            let cache = try Self.open(directory)
            try cache.store(payload(1, size: 30_000), forKey: "https://example.com/a.jpg", metadata: metadata)
            try cache.store(Data(), forKey: "empty")
            let entry = try #require(try cache.entry(forKey: "https://example.com/a.jpg"))
            #expect(entry.data == payload(1, size: 30_000) && entry.metadata == metadata)
        }
        let reopened = try Self.open(directory)
        #expect(try reopened.data(forKey: "https://example.com/a.jpg") == payload(1, size: 30_000))
        #expect(try reopened.data(forKey: "empty") == Data())
        #expect(try reopened.entry(forKey: "https://example.com/a.jpg")?.metadata == metadata)
        #expect(try reopened.data(forKey: "missing") == nil)
        #expect(reopened.statistics.count == 2)
    }

    @Test("keys never become paths: traversal attempts land inside entries/ under a hash")
    func hostileKeys() throws {
        let directory = try TemporaryDirectory()
        let cache = try Self.open(directory)
        let keys = ["../../etc/passwd", "/absolute", String(repeating: "x", count: 5000), "a\0b", "ключ/🙂"]
        for (index, key) in keys.enumerated() { try cache.store(payload(index, size: 100), forKey: key) }
        for (index, key) in keys.enumerated() { #expect(try cache.data(forKey: key) == payload(index, size: 100)) }
        #expect(Self.entryFiles(directory).count == keys.count)
        #expect(Self.entryFiles(directory).allSatisfy { $0.count == 64 })
    }

    @Test("the size limit holds after every write, evicting least recently used first")
    func sizeLimit() throws {
        let directory = try TemporaryDirectory()
        let cache = try Self.open(directory, limit: 50_000)
        for index in 0..<4 { try cache.store(payload(index, size: 10_000), forKey: "k\(index)") }
        _ = try cache.data(forKey: "k0")  // k0 becomes most recent; k1 is least
        for index in 4..<6 {
            try cache.store(payload(index, size: 10_000), forKey: "k\(index)")
            #expect(cache.statistics.totalBytes <= 50_000)
        }
        #expect(try cache.data(forKey: "k1") == nil)
        #expect(try cache.data(forKey: "k0") != nil && cache.data(forKey: "k5") != nil)
        #expect(Self.entryFiles(directory).count == cache.statistics.count)
        #expect(throws: DiskCacheError.self) { try cache.store(payload(9, size: 60_000), forKey: "huge") }
    }

    @Test("least-recently-used order survives reopening (the journal records reads)")
    func orderPersists() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try Self.open(directory, limit: 50_000)
            for index in 0..<4 { try cache.store(payload(index, size: 10_000), forKey: "k\(index)") }
            _ = try cache.data(forKey: "k0")
        }
        let reopened = try Self.open(directory, limit: 50_000)
        try reopened.store(payload(7, size: 10_000), forKey: "k7")
        try reopened.store(payload(8, size: 10_000), forKey: "k8")
        #expect(try reopened.data(forKey: "k1") == nil)
        #expect(try reopened.data(forKey: "k0") != nil)
    }

    @Test("reopening with a smaller limit applies it at once, least recently used first")
    func smallerLimitOnOpen() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try Self.open(directory)
            for index in 0..<5 { try cache.store(payload(index, size: 10_000), forKey: "k\(index)") }
        }
        let reopened = try Self.open(directory, limit: 25_000)
        #expect(reopened.statistics.count == 2 && reopened.statistics.totalBytes <= 25_000)
        #expect(try reopened.data(forKey: "k4") != nil && reopened.data(forKey: "k3") != nil)
        #expect(Self.entryFiles(directory).count == 2)
    }

    @Test("a damaged or truncated entry file reads as a miss and is removed", arguments: ["flip", "truncate", "empty", "garbage"])
    func damagedEntries(_ damage: String) throws {
        let directory = try TemporaryDirectory()
        let cache = try Self.open(directory)
        try cache.store(payload(1, size: 5000), forKey: "victim")
        try cache.store(payload(2, size: 5000), forKey: "bystander")
        let path = directory.url.path + "/entries/" + DiskCacheKey.fileName(for: "victim")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        switch damage {
        case "flip": bytes[bytes.count / 2] ^= 0x01
        case "truncate": bytes.removeLast(100)
        case "empty": bytes = []
        default: bytes = Array(payload(3, size: bytes.count))
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try cache.data(forKey: "victim") == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(cache.statistics.corruptEntriesRemoved == 1)
        #expect(try cache.data(forKey: "bystander") == payload(2, size: 5000))
    }

    @Test("opening removes orphans and temporary files, drops entries whose file is gone, ignores a torn journal line")
    func recoveryOnOpen() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try Self.open(directory)
            for index in 0..<3 { try cache.store(payload(index, size: 1000), forKey: "k\(index)") }
        }
        let root = directory.url.path
        try Data("orphan".utf8).write(to: URL(fileURLWithPath: root + "/entries/" + String(repeating: "a", count: 64)))
        try Data("partial".utf8).write(to: URL(fileURLWithPath: root + "/tmp/" + DiskCacheKey.fileName(for: "k9") + ".tmp"))
        try FileManager.default.removeItem(atPath: root + "/entries/" + DiskCacheKey.fileName(for: "k1"))
        let journal = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/journal"))
        journal.seekToEndOfFile()
        journal.write(Data("DIRTY \(DiskCacheKey.fileName(for: "k5"))\nCLEAN \(DiskCacheKey.fileName(for: "k2")) 12".utf8))
        try journal.close()

        let cache = try Self.open(directory)
        #expect(try cache.data(forKey: "k0") == payload(0, size: 1000))
        #expect(try cache.data(forKey: "k1") == nil)
        #expect(try cache.data(forKey: "k2") == payload(2, size: 1000))
        #expect(cache.statistics.count == 2)
        #expect(Self.entryFiles(directory).count == 2)
        #expect((try FileManager.default.contentsOfDirectory(atPath: root + "/tmp")).isEmpty)
        let report = try cache.verify()
        #expect(report.orphans.count == 2 && report.missing.count == 1 && report.valid == 2 && report.corrupt.isEmpty)
    }

    @Test("a second process-level open of the same directory fails fast as locked")
    func locked() throws {
        let directory = try TemporaryDirectory()
        let first = try Self.open(directory)
        // flock locks belong to the open file description, so a second open in the same
        // process conflicts just as another process would.
        #expect(throws: DiskCacheError.locked(directory: directory.url.path)) { try Self.open(directory) }
        _ = first
    }

    @Test("expired entries are misses unless asked for, for revalidation")
    func expiry() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock()
        let cache = try Self.open(directory, clock: clock)
        try cache.store(payload(1, size: 100), forKey: "k", metadata: DiskCacheMetadata(etag: "v1", expires: clock.now + 60))
        clock.advance(by: 61)
        #expect(try cache.entry(forKey: "k", allowingExpired: true)?.metadata.etag == "v1")
        #expect(try cache.entry(forKey: "k") == nil)
        #expect(cache.statistics.count == 0)
    }

    @Test("remove and removeAll")
    func removal() throws {
        let directory = try TemporaryDirectory()
        let cache = try Self.open(directory)
        for index in 0..<5 { try cache.store(payload(index, size: 100), forKey: "k\(index)") }
        try cache.removeEntry(forKey: "k2")
        #expect(try cache.data(forKey: "k2") == nil && cache.statistics.count == 4)
        try cache.removeAll()
        #expect(cache.statistics.count == 0 && cache.statistics.totalBytes == 0 && Self.entryFiles(directory).isEmpty)
        try cache.store(payload(9, size: 100), forKey: "after")
        #expect(try cache.data(forKey: "after") == payload(9, size: 100))
    }
}

@Suite("Disk cache faults")
struct DiskCacheFaultTests {
    @Test("disk full and permission errors are typed, leave nothing half-written, and the cache stays usable",
          arguments: [(FaultyFileSystem.Operation.write, ENOSPC), (.rename, EACCES), (.append, ENOSPC)])
    func writeFaults(_ operation: FaultyFileSystem.Operation, _ code: Int32) throws {
        let directory = try TemporaryDirectory()
        try writeFaults(operation, code, in: directory)
        // Whatever became of "during", reopening gives a consistent cache.
        let reopened = try DiskCacheTests.open(directory)
        let report = try reopened.verify()
        #expect(report.corrupt.isEmpty && report.valid == reopened.statistics.count)
        #expect(try reopened.data(forKey: "before") == payload(1, size: 2000))
        #expect(try reopened.data(forKey: "after") == payload(3, size: 2000))
        #expect(DiskCacheTests.entryFiles(directory).count == reopened.statistics.count)
    }

    private func writeFaults(_ operation: FaultyFileSystem.Operation, _ code: Int32, in directory: TemporaryDirectory) throws {
        let fileSystem = FaultyFileSystem()
        let cache = try DiskCacheTests.open(directory, fileSystem: fileSystem)
        try cache.store(payload(1, size: 2000), forKey: "before")
        fileSystem.fail(operation, with: code)
        do {
            try cache.store(payload(2, size: 2000), forKey: "during")
            Issue.record("store succeeded despite \(operation) failing")
        } catch .io(let error) {
            #expect(error.code == code)
        } catch {
            Issue.record("unexpected \(error)")
        }
        fileSystem.heal()
        #expect((try FileManager.default.contentsOfDirectory(atPath: directory.url.path + "/tmp")).isEmpty)
        #expect(try cache.data(forKey: "before") == payload(1, size: 2000))
        try cache.store(payload(3, size: 2000), forKey: "after")
        #expect(try cache.data(forKey: "after") == payload(3, size: 2000))
    }

    @Test("a read error is typed and the entry is kept for a later read")
    func readFault() throws {
        let directory = try TemporaryDirectory()
        let fileSystem = FaultyFileSystem()
        let cache = try DiskCacheTests.open(directory, fileSystem: fileSystem)
        try cache.store(payload(1, size: 2000), forKey: "k")
        fileSystem.fail(.read, with: EACCES)
        #expect(throws: DiskCacheError.io(FileSystemError(operation: "read", path: directory.url.path + "/entries/" + DiskCacheKey.fileName(for: "k"), code: EACCES))) {
            try cache.data(forKey: "k")
        }
        fileSystem.heal()
        #expect(try cache.data(forKey: "k") == payload(1, size: 2000))
    }

    @Test("the cache directory removed underneath is recreated on the next write")
    func directoryRemoved() throws {
        let directory = try TemporaryDirectory()
        let cache = try DiskCacheTests.open(directory)
        try cache.store(payload(1, size: 2000), forKey: "old")
        try FileManager.default.removeItem(at: directory.url)
        #expect(try cache.data(forKey: "old") == nil)
        try cache.store(payload(2, size: 2000), forKey: "new")
        #expect(try cache.data(forKey: "new") == payload(2, size: 2000))
        #expect(cache.statistics.count == 1)
    }

    @Test("opening an unwritable location is a typed error")
    func unwritable() throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("not-a-directory")
        try Data("x".utf8).write(to: file)
        #expect(throws: DiskCacheError.self) { try DiskCache(directory: file.path + "/cache") }
    }
}

@Suite("Disk cache concurrency")
struct DiskCacheConcurrencyTests {
    @Test("many tasks storing and reading get only whole, correct entries; the limit holds")
    func stress() async throws {
        let directory = try TemporaryDirectory()
        let cache = try DiskCacheTests.open(directory, limit: 400_000)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<6 {
                group.addTask {
                    for step in 0..<150 {
                        let key = (step * 5 + worker) % 40
                        if step % 3 == 0 {
                            try? cache.store(payload(key, size: 5000 + key * 100), forKey: "k\(key)")
                        } else if let data = try? cache.data(forKey: "k\(key)") {
                            #expect(data == payload(key, size: 5000 + key * 100))
                        }
                    }
                }
            }
        }
        #expect(cache.statistics.totalBytes <= 400_000)
        #expect(DiskCacheTests.entryFiles(directory).count == cache.statistics.count)
    }
}
