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
            queue.store(forKey: "gate", holding: 0) { [semaphore] in
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
        queue.store(forKey: "made", holding: 300) { (payload(3, size: 300), DiskCacheMetadata()) }
        #expect(await queue.entry(forKey: "made") == nil)
        queue.store(payload(4, size: 100), metadata: DiskCacheMetadata(), forKey: "k")
        queue.store(payload(5, size: 100), metadata: DiskCacheMetadata(), forKey: "k")
        #expect(await queue.entry(forKey: "k")?.data == payload(5, size: 100))
        // A removal queued after a making-store for the same key wins, though the store runs first.
        queue.store(forKey: "removed", holding: 100) { (payload(6, size: 100), DiskCacheMetadata()) }
        queue.remove(forKey: "removed")
        gate.open()
        await queue.flush()
        #expect(try disk.value(forKey: "made") == payload(3, size: 300))
        #expect(try disk.value(forKey: "k") == payload(5, size: 100))
        #expect(try disk.value(forKey: "removed") == nil)
        #expect(Fixture.entryFiles(directory).count == 2)
    }

    @Test("the write backlog is bounded: a store that does not fit is dropped and counted, removals never are, and the bytes come back")
    func boundedBacklog() async throws {
        let directory = try TemporaryDirectory()
        let disk = try Fixture.open(directory)
        try disk.setValue(payload(1, size: 100), forKey: "old")
        let drops = Counter()
        let queue = DiskCacheQueue(disk: disk, maximumPendingBytes: 1_000, onDrop: { drops.increment() })
        let gate = WriteGate()
        gate.close(queue)
        queue.store(payload(2, size: 600), metadata: DiskCacheMetadata(), forKey: "first")
        queue.store(payload(3, size: 600), metadata: DiskCacheMetadata(), forKey: "second") // 1200 > 1000: dropped
        queue.store(forKey: "made", holding: 500) { (payload(4, size: 50), DiskCacheMetadata()) } // dropped too
        queue.store(payload(5, size: 300), metadata: DiskCacheMetadata(), forKey: "third") // 900: fits
        queue.remove(forKey: "old") // a removal always fits
        #expect(drops.value == 2 && queue.pendingWriteBytes == 900)
        #expect(await queue.entry(forKey: "second") == nil)
        #expect(await queue.entry(forKey: "old") == nil)
        gate.open()
        await queue.flush()
        #expect(queue.pendingWriteBytes == 0)
        #expect(try disk.value(forKey: "first") == payload(2, size: 600))
        #expect(try disk.value(forKey: "third") == payload(5, size: 300))
        for dropped in ["second", "made", "old"] { #expect(try disk.value(forKey: dropped) == nil, "\(dropped)") }
        // Alone, a store larger than the whole backlog is still taken (the body limit bounds it).
        queue.store(payload(6, size: 5_000), metadata: DiskCacheMetadata(), forKey: "large")
        await queue.flush()
        #expect(try disk.value(forKey: "large") == payload(6, size: 5_000))
        #expect(drops.value == 2)
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func increment() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
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
