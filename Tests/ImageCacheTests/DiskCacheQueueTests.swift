import Dispatch
import Foundation
import Testing
import TestSupport
@testable import ImageCache

/// `DiskCacheQueue` promises that what a caller queued is what it reads back, before and after
/// the disk catches up. Each test holds the write queue shut with a making-store that waits on
/// a semaphore, so "queued but not yet written" is a state the test controls, not a race.
@Suite("Disk cache queue")
struct DiskCacheQueueTests {
    typealias Fixture = DiskCacheFixture

    /// Blocks the queue's writes until `open` is called.
    private final class WriteGate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        func close(_ queue: DiskCacheQueue) {
            queue.store(forKey: "gate") { [semaphore] in
                semaphore.wait()
                return nil
            }
        }
        func open() { semaphore.signal() }
    }

    @Test("a queued write is read back before it reaches the disk; a queued removal hides the entry at once")
    func queuedStateIsVisible() async throws {
        let directory = try TemporaryDirectory()
        let disk = try Fixture.open(directory)
        let queue = DiskCacheQueue(disk: disk)
        let metadata = DiskCacheMetadata(contentType: "image/jpeg", etag: "\"v1\"", fields: ["source-alpha": "0"])
        try disk.setValue(payload(2, size: 500), forKey: "b")

        let gate = WriteGate()
        gate.close(queue)
        queue.store(payload(1, size: 2_000), metadata: metadata, forKey: "a")
        queue.remove(forKey: "b")
        let queuedA = try #require(await queue.entry(forKey: "a"))
        #expect(queuedA.data == payload(1, size: 2_000) && queuedA.metadata == metadata)
        #expect(try disk.entry(forKey: "a") == nil, "the write is still queued")
        #expect(await queue.entry(forKey: "b") == nil)
        #expect(try disk.value(forKey: "b") == payload(2, size: 500), "the removal is still queued")

        gate.open()
        await queue.flush()
        let writtenA = try #require(try disk.entry(forKey: "a"))
        #expect(writtenA.data == payload(1, size: 2_000) && writtenA.metadata == metadata)
        #expect(try disk.value(forKey: "b") == nil)
        #expect(await queue.entry(forKey: "a")?.data == payload(1, size: 2_000), "read back from the disk now")
    }

    @Test("a later write to the same key wins, whichever order the disk sees them in; a making-store is not visible until written")
    func latestWins() async throws {
        let directory = try TemporaryDirectory()
        let disk = try Fixture.open(directory)
        let queue = DiskCacheQueue(disk: disk)
        let gate = WriteGate()
        gate.close(queue)
        queue.store(forKey: "made") { (payload(3, size: 300), DiskCacheMetadata()) }
        #expect(await queue.entry(forKey: "made") == nil)
        queue.store(payload(4, size: 100), metadata: DiskCacheMetadata(), forKey: "k")
        queue.store(payload(5, size: 100), metadata: DiskCacheMetadata(), forKey: "k")
        #expect(await queue.entry(forKey: "k")?.data == payload(5, size: 100))
        // A removal queued after a making-store for the same key wins, though the store runs first.
        queue.store(forKey: "removed") { (payload(6, size: 100), DiskCacheMetadata()) }
        queue.remove(forKey: "removed")
        gate.open()
        await queue.flush()
        #expect(try disk.value(forKey: "made") == payload(3, size: 300))
        #expect(try disk.value(forKey: "k") == payload(5, size: 100))
        #expect(try disk.value(forKey: "removed") == nil)
        #expect(Fixture.entryFiles(directory).count == 2)
    }

    @Test("removeAll drops what was queued before it and empties the disk")
    func removeAllDropsQueuedWrites() async throws {
        let directory = try TemporaryDirectory()
        let disk = try Fixture.open(directory)
        let queue = DiskCacheQueue(disk: disk)
        try disk.setValue(payload(7, size: 100), forKey: "old")
        let gate = WriteGate()
        gate.close(queue)
        queue.store(payload(8, size: 100), metadata: DiskCacheMetadata(), forKey: "queued")
        // removeAll waits for the running write: open the gate from elsewhere once it waits.
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { gate.open() }
        try queue.removeAll()
        await queue.flush()
        #expect(await queue.entry(forKey: "queued") == nil)
        #expect(try disk.value(forKey: "queued") == nil && disk.value(forKey: "old") == nil)
        #expect(Fixture.entryFiles(directory).isEmpty)
    }

    @Test("a disk that refuses a read or a write is a miss or a dropped write, reported once each, never an error to the caller")
    func diskErrorsAreReported() async throws {
        let directory = try TemporaryDirectory()
        let fileSystem = FaultyFileSystem()
        let disk = try Fixture.open(directory, fileSystem: fileSystem)
        try disk.setValue(payload(9, size: 100), forKey: "stored")
        let errors = CallCounter()
        let queue = DiskCacheQueue(disk: disk, onError: { errors.increment() })

        fileSystem.fail(.write, with: ENOSPC)
        queue.store(payload(10, size: 100), metadata: DiskCacheMetadata(), forKey: "new")
        await queue.flush()
        #expect(errors.value == 1)
        #expect(await queue.entry(forKey: "new") == nil, "a dropped write is not served from memory afterwards")

        fileSystem.fail(.read, with: EIO)
        #expect(await queue.entry(forKey: "stored") == nil)
        #expect(errors.value == 2)
        fileSystem.heal()
        #expect(await queue.entry(forKey: "stored")?.data == payload(9, size: 100))
    }
}
