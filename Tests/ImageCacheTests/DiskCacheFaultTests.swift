import Foundation
import Testing
import TestSupport
@testable import ImageCache

@Suite("Disk cache faults")
struct DiskCacheFaultTests {
    typealias Fixture = DiskCacheFixture

    @Test(
        "disk full and permission errors are typed, leave nothing half-written, and the cache stays usable",
        arguments: [(FaultyFileSystem.Operation.write, ENOSPC), (.rename, EACCES), (.append, ENOSPC)])
    func writeFaults(_ operation: FaultyFileSystem.Operation, _ code: Int32) throws {
        let directory = try TemporaryDirectory()
        do {
            let fileSystem = FaultyFileSystem()
            let cache = try Fixture.open(directory, fileSystem: fileSystem)
            try cache.setValue(payload(1, size: 2000), forKey: "before")
            fileSystem.fail(operation, with: code)
            #expect(throws: DiskCacheError.self) { try cache.setValue(payload(2, size: 2000), forKey: "during") }
            do {
                try cache.setValue(payload(2, size: 2000), forKey: "during")
            } catch .io(let error) {
                #expect(error.code == code)
            } catch {
                Issue.record("unexpected \(error)")
            }
            fileSystem.heal()
            // The half-written temporary file is gone; nothing torn is readable.
            #expect(Fixture.temporaryFiles(directory).isEmpty)
            #expect(try cache.value(forKey: "before") == payload(1, size: 2000))
            let during = try cache.value(forKey: "during")
            #expect(during == nil || during == payload(2, size: 2000))
            try cache.setValue(payload(3, size: 2000), forKey: "after")
            #expect(try cache.value(forKey: "after") == payload(3, size: 2000))
            #expect(cache.statistics.totalBytes == Fixture.bytesOnDisk(directory.url))
        }
        // Whatever became of "during", reopening gives a consistent cache.
        let reopened = try Fixture.open(directory)
        let report = try reopened.verify()
        #expect(report.corrupt.isEmpty && report.valid == reopened.statistics.count)
        #expect(try reopened.value(forKey: "before") == payload(1, size: 2000))
        #expect(try reopened.value(forKey: "after") == payload(3, size: 2000))
        #expect(Fixture.entryFiles(directory).count == reopened.statistics.count)
    }

    @Test("a failed store leaves the old entry where it was in the LRU order")
    func failedStoreKeepsOrder() throws {
        let directory = try TemporaryDirectory()
        let fileSystem = FaultyFileSystem()
        let size = DiskCache.storedSize(of: payload(1, size: 10_000), forKey: "a")
        let cache = try Fixture.open(directory, limit: 2 * size, fileSystem: fileSystem)
        try cache.setValue(payload(1, size: 10_000), forKey: "a")
        try cache.setValue(payload(2, size: 10_000), forKey: "b")
        fileSystem.fail(.write, with: ENOSPC)
        #expect(throws: DiskCacheError.self) { try cache.setValue(payload(3, size: 10_000), forKey: "a") }
        fileSystem.heal()
        try cache.setValue(payload(4, size: 10_000), forKey: "c")
        #expect(try cache.value(forKey: "a") == nil, "a was least recently used and must be the one evicted")
        #expect(try cache.value(forKey: "b") == payload(2, size: 10_000))
    }

    @Test("a victim whose file cannot be removed stays counted, so the accounting matches the disk")
    func failedEviction() throws {
        let directory = try TemporaryDirectory()
        let fileSystem = FaultyFileSystem()
        let size = DiskCache.storedSize(of: payload(1, size: 10_000), forKey: "a")
        let cache = try Fixture.open(directory, limit: 2 * size, fileSystem: fileSystem)
        try cache.setValue(payload(1, size: 10_000), forKey: "a")
        try cache.setValue(payload(2, size: 10_000), forKey: "b")
        fileSystem.fail(.remove, with: EACCES, matching: DiskCache.entryFileName(forKey: "a"))
        try cache.setValue(payload(3, size: 10_000), forKey: "c")
        #expect(cache.statistics.totalBytes == Fixture.bytesOnDisk(directory.url))
        #expect(cache.statistics.count == Fixture.entryFiles(directory).count)
        #expect(cache.statistics.counters.failedEvictions == 1)
        #expect(try cache.value(forKey: "a") == payload(1, size: 10_000)) // still there, still correct
        fileSystem.heal()
        try cache.setValue(payload(4, size: 10_000), forKey: "d")
        #expect(cache.statistics.totalBytes <= 2 * size)
        #expect(cache.statistics.totalBytes == Fixture.bytesOnDisk(directory.url))
    }

    @Test("a full disk at open with an intact journal: the cache opens, reads, and reports the full disk on store")
    func fullDiskAtOpen() throws {
        let directory = try TemporaryDirectory()
        do { try Fixture.open(directory).setValue(payload(1, size: 2000), forKey: "k") }
        let fileSystem = FaultyFileSystem()
        fileSystem.fail(.write, with: ENOSPC)
        let cache = try Fixture.open(directory, limit: nil, fileSystem: fileSystem)
        #expect(!FileManager.default.fileExists(atPath: directory.file("journal.tmp").path))
        #expect(try cache.value(forKey: "k") == payload(1, size: 2000))
        do {
            try cache.setValue(payload(2, size: 2000), forKey: "k2")
            Issue.record("a store on a full disk succeeded")
        } catch .io(let error) {
            #expect(error.code == ENOSPC)
        } catch {
            Issue.record("unexpected \(error)")
        }
        fileSystem.heal()
        try cache.setValue(payload(2, size: 2000), forKey: "k2")
        #expect(try cache.value(forKey: "k2") == payload(2, size: 2000))
    }

    @Test("a full disk at open with a damaged journal: read-only (reads work, stores say why) until there is room")
    func readOnlyAtOpen() throws {
        let directory = try TemporaryDirectory()
        do { try Fixture.open(directory).setValue(payload(1, size: 2000), forKey: "k") }
        try Data("not a journal".utf8).write(to: directory.file("journal"))
        let fileSystem = FaultyFileSystem()
        fileSystem.fail(.write, with: ENOSPC)
        let cache = try Fixture.open(directory, limit: nil, fileSystem: fileSystem)
        #expect(cache.statistics.isReadOnly)
        #expect(!FileManager.default.fileExists(atPath: directory.file("journal.tmp").path))
        #expect(try cache.value(forKey: "k") == payload(1, size: 2000))
        do {
            try cache.setValue(payload(2, size: 2000), forKey: "k2")
            Issue.record("a read-only cache accepted a store")
        } catch .readOnly(let error) {
            #expect(error.code == ENOSPC)
        } catch {
            Issue.record("unexpected \(error)")
        }
        fileSystem.heal()
        try cache.setValue(payload(2, size: 2000), forKey: "k2")
        #expect(!cache.statistics.isReadOnly)
        #expect(try cache.value(forKey: "k2") == payload(2, size: 2000))
    }

    @Test("a read error is typed and the entry is kept for a later read")
    func readFault() throws {
        let directory = try TemporaryDirectory()
        let fileSystem = FaultyFileSystem()
        let cache = try Fixture.open(directory, fileSystem: fileSystem)
        try cache.setValue(payload(1, size: 2000), forKey: "k")
        fileSystem.fail(.read, with: EACCES)
        #expect(throws: DiskCacheError.io(FileSystemError(operation: "read", path: Fixture.path(of: "k", in: directory), code: EACCES))) {
            try cache.value(forKey: "k")
        }
        fileSystem.heal()
        #expect(try cache.value(forKey: "k") == payload(1, size: 2000))
    }

    @Test("synchronizesWrites flushes the entry, its directory and the journal on every store; without it, nothing")
    func synchronizedWrites() throws {
        for synchronizes in [true, false] {
            let directory = try TemporaryDirectory()
            let fileSystem = FaultyFileSystem()
            let cache = try Fixture.open(directory, synchronizes: synchronizes, fileSystem: fileSystem)
            let before = fileSystem.count(.sync)
            try cache.setValue(payload(1, size: 2000), forKey: "k")
            #expect(fileSystem.count(.sync) - before == (synchronizes ? 3 : 0), "synchronizes: \(synchronizes)")
            fileSystem.fail(.sync, with: EIO)
            if synchronizes {
                #expect(throws: DiskCacheError.self) { try cache.setValue(payload(2, size: 2000), forKey: "k2") }
            } else {
                try cache.setValue(payload(2, size: 2000), forKey: "k2")
            }
        }
    }

    @Test("opening an unwritable location is a typed error")
    func unwritable() throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("not-a-directory")
        try Data("x".utf8).write(to: file)
        #expect(throws: DiskCacheError.io(FileSystemError(operation: "mkdir", path: file.path + "/cache", code: ENOTDIR))) {
            try DiskCache(directory: file.appendingPathComponent("cache"))
        }
    }

    @Test("a write that fails after its rename closes its bookkeeping once: another write of the entry stays in flight")
    func failureAfterRenameFinishesOnce() throws {
        let directory = try TemporaryDirectory()
        let fileSystem = FaultyFileSystem()
        let cache = try Fixture.open(directory, fileSystem: fileSystem)
        let name = DiskCache.entryFileName(forKey: "k")
        // B writes its temporary file and stops there, in flight.
        let pausedB = fileSystem.pause(after: .write, matching: name)
        let writeB = ThreadRun { try cache.setValue(payload(1, size: 1_000), forKey: "k") }
        #expect(pausedB.waitUntilReached())
        // A gets as far, then its CLEAN record fails to append after the rename.
        let pausedA = fileSystem.pause(after: .write, matching: name)
        let writeA = ThreadRun { try cache.setValue(payload(2, size: 1_000), forKey: "k") }
        #expect(pausedA.waitUntilReached())
        #expect(cache.lock.withLock { cache.writesInFlight[name] } == 2)
        fileSystem.fail(.append, with: EIO)
        pausedA.release()
        #expect(throws: (any Error).self) { try writeA.value() }
        #expect(cache.lock.withLock { cache.writesInFlight[name] } == 1, "B's write was taken off the books while in flight")
        fileSystem.heal()
        pausedB.release()
        try writeB.value()
        #expect(cache.lock.withLock { cache.writesInFlight[name] } == nil)
        #expect(try cache.value(forKey: "k") == payload(1, size: 1_000))
    }
}
