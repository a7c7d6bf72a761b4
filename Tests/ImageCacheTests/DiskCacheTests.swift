import Foundation
import Testing
import TestSupport
@testable import ImageCache

@Suite("Disk cache")
struct DiskCacheTests {
    typealias Fixture = DiskCacheFixture

    @Test("metadata written before named fields existed reads back, with none; damaged field lists are refused")
    func metadataCompatibility() throws {
        let old = DiskCacheMetadata(contentType: "image/png", etag: nil, lastModified: "x", expires: nil)
        let encoded = MetadataCoding.encode(old)
        #expect(encoded.count == 3 * 4 + 9 + 1 + 8, "no field list when there are no fields: the old layout")
        #expect(MetadataCoding.decode(encoded) == old)
        let withFields = MetadataCoding.encode(DiskCacheMetadata(fields: ["a": "b"]))
        #expect(MetadataCoding.decode(withFields)?.fields == ["a": "b"])
        var huge = Data(withFields.prefix(withFields.count - 10))
        huge.append(contentsOf: [0xFF, 0xFF, 0xFF, 0x7F]) // a count of two billion pairs
        #expect(MetadataCoding.decode(huge) == nil)
        #expect(MetadataCoding.decode(withFields.dropLast()) == nil)
        #expect(MetadataCoding.decode(withFields + Data([0])) == nil)
    }

    @Test("stores and returns bytes and metadata, across reopening")
    func roundTrip() throws {
        let directory = try TemporaryDirectory()
        let metadata = DiskCacheMetadata(
            contentType: "image/jpeg", etag: "\"abc\"", lastModified: "Tue, 15 Nov 1994 12:45:26 GMT",
            expires: Date(timeIntervalSince1970: 4_000_000_000),
            fields: ["cache-control": "max-age=60, no-cache=\"a,b\"", "vary": "Accept", "": "é"])
        do {
            let cache = try Fixture.open(directory)
            try cache.setValue(payload(1, size: 30_000), forKey: "https://example.com/a.jpg", metadata: metadata)
            try cache.setValue(Data(), forKey: "empty")
            let entry = try #require(try cache.entry(forKey: "https://example.com/a.jpg"))
            #expect(entry.data == payload(1, size: 30_000) && entry.metadata == metadata)
        }
        let reopened = try Fixture.open(directory)
        #expect(try reopened.value(forKey: "https://example.com/a.jpg") == payload(1, size: 30_000))
        #expect(try reopened.value(forKey: "empty") == Data())
        #expect(try reopened.entry(forKey: "https://example.com/a.jpg")?.metadata == metadata)
        #expect(try reopened.value(forKey: "missing") == nil)
        #expect(reopened.statistics.count == 2)
        #expect(reopened.statistics.totalBytes == Fixture.bytesOnDisk(directory.url))
    }

    @Test("keys never become paths: traversal attempts land inside entries/ under a hash")
    func hostileKeys() throws {
        let directory = try TemporaryDirectory()
        let cache = try Fixture.open(directory)
        let keys = ["../../etc/passwd", "/absolute", String(repeating: "x", count: 5000), "a\0b", "ключ/🙂"]
        for (index, key) in keys.enumerated() { try cache.setValue(payload(index, size: 100), forKey: key) }
        for (index, key) in keys.enumerated() { #expect(try cache.value(forKey: key) == payload(index, size: 100)) }
        #expect(Fixture.entryFiles(directory) == keys.map(DiskCache.entryFileName(forKey:)).sorted())
        #expect(Fixture.entryFiles(directory).allSatisfy { $0.count == 64 })
    }

    @Test("the size limit holds after every write, evicting least recently used first; accounting matches the disk")
    func sizeLimit() throws {
        let directory = try TemporaryDirectory()
        let cache = try Fixture.open(directory, limit: 50_000)
        for index in 0..<4 { try cache.setValue(payload(index, size: 10_000), forKey: "k\(index)") }
        _ = try cache.value(forKey: "k0") // k0 becomes most recent; k1 is least
        for index in 4..<6 {
            try cache.setValue(payload(index, size: 10_000), forKey: "k\(index)")
            #expect(cache.statistics.totalBytes <= 50_000)
            #expect(cache.statistics.totalBytes == Fixture.bytesOnDisk(directory.url))
        }
        #expect(try cache.value(forKey: "k1") == nil)
        #expect(try cache.value(forKey: "k2") == nil)
        #expect(try cache.value(forKey: "k0") != nil && cache.value(forKey: "k5") != nil)
        #expect(Fixture.entryFiles(directory).count == cache.statistics.count)
        #expect(cache.statistics.counters.evictions == 2)
        #expect(
            throws: DiskCacheError.entryTooLarge(
                key: "huge", size: DiskCache.storedSize(of: payload(9, size: 60_000), forKey: "huge"),
                limit: 50_000)
        ) {
            try cache.setValue(payload(9, size: 60_000), forKey: "huge")
        }
    }

    @Test("storedSize is exactly what an entry adds to totalBytes")
    func storedSize() throws {
        let directory = try TemporaryDirectory()
        let cache = try Fixture.open(directory)
        let metadata = DiskCacheMetadata(contentType: "image/png", etag: "\"v7\"")
        try cache.setValue(payload(3, size: 1234), forKey: "key", metadata: metadata)
        #expect(cache.statistics.totalBytes == DiskCache.storedSize(of: payload(3, size: 1234), forKey: "key", metadata: metadata))
        #expect(cache.statistics.totalBytes == Fixture.bytesOnDisk(directory.url))
    }

    @Test("least-recently-used order survives reopening (the journal records reads)")
    func orderPersists() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try Fixture.open(directory, limit: 50_000)
            for index in 0..<4 { try cache.setValue(payload(index, size: 10_000), forKey: "k\(index)") }
            _ = try cache.value(forKey: "k0")
        }
        let reopened = try Fixture.open(directory, limit: nil)
        try reopened.setValue(payload(7, size: 10_000), forKey: "k7")
        try reopened.setValue(payload(8, size: 10_000), forKey: "k8")
        #expect(try reopened.value(forKey: "k1") == nil)
        #expect(try reopened.value(forKey: "k0") != nil)
    }

    @Test("an explicit smaller limit is applied at open, least recently used first")
    func smallerLimitOnOpen() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try Fixture.open(directory)
            for index in 0..<5 { try cache.setValue(payload(index, size: 10_000), forKey: "k\(index)") }
        }
        let reopened = try Fixture.open(directory, limit: 25_000)
        #expect(reopened.statistics.count == 2 && reopened.statistics.totalBytes <= 25_000)
        #expect(try reopened.value(forKey: "k4") != nil && reopened.value(forKey: "k3") != nil)
        #expect(Fixture.entryFiles(directory).count == 2)
    }

    @Test("the limit belongs to the directory: recorded, kept by later opens without one, and opening without one never evicts")
    func limitIsRecorded() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try Fixture.open(directory, limit: 1_000_000)
            for index in 0..<5 { try cache.setValue(payload(index, size: 10_000), forKey: "k\(index)") }
        }
        do {
            let reopened = try Fixture.open(directory, limit: nil)
            #expect(reopened.statistics.sizeLimit == 1_000_000 && reopened.statistics.count == 5)
            try reopened.setSizeLimit(25_000)
            #expect(reopened.statistics.count == 2 && reopened.currentSizeLimit == 25_000)
            #expect(throws: DiskCacheError.invalidSizeLimit(0)) { try reopened.setSizeLimit(0) }
        }
        let again = try Fixture.open(directory, limit: nil)
        #expect(again.statistics.sizeLimit == 25_000 && again.statistics.count == 2)
        let fresh = try TemporaryDirectory()
        #expect(try Fixture.open(fresh, limit: nil).statistics.sizeLimit == DiskCacheConfiguration.defaultSizeLimit)
    }

    @Test("a damaged or truncated entry file reads as a miss and is removed", arguments: ["flip", "truncate", "empty", "garbage"])
    func damagedEntries(_ damage: String) throws {
        let directory = try TemporaryDirectory()
        let cache = try Fixture.open(directory)
        try cache.setValue(payload(1, size: 5000), forKey: "victim")
        try cache.setValue(payload(2, size: 5000), forKey: "bystander")
        let path = Fixture.path(of: "victim", in: directory)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        switch damage {
        case "flip": bytes[bytes.count / 2] ^= 0x01
        case "truncate": bytes.removeLast(100)
        case "empty": bytes = []
        default: bytes = Array(payload(3, size: bytes.count))
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try cache.value(forKey: "victim") == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(cache.statistics.counters.corruptEntriesRemoved == 1)
        #expect(try cache.value(forKey: "bystander") == payload(2, size: 5000))
    }

    @Test("a second open of the same directory fails fast as locked")
    func locked() throws {
        let directory = try TemporaryDirectory()
        let first = try Fixture.open(directory)
        // flock locks belong to the open file description, so a second open in the same
        // process conflicts just as another process would.
        #expect(throws: DiskCacheError.locked(directory: directory.url)) { try Fixture.open(directory) }
        _ = first
    }

    @Test("expired entries are misses unless asked for, for revalidation")
    func expiry() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock()
        let cache = try Fixture.open(directory, clock: clock)
        try cache.setValue(payload(1, size: 100), forKey: "k", metadata: DiskCacheMetadata(etag: "v1", expires: clock.now + 60))
        #expect(try cache.entry(forKey: "k")?.metadata.etag == "v1")
        clock.advance(by: 61)
        #expect(try cache.entry(forKey: "k", allowingExpired: true)?.metadata.etag == "v1")
        #expect(try cache.entry(forKey: "k") == nil)
        #expect(cache.statistics.count == 0 && Fixture.entryFiles(directory).isEmpty)
    }

    @Test("removeValue and removeAll")
    func removal() throws {
        let directory = try TemporaryDirectory()
        let cache = try Fixture.open(directory)
        for index in 0..<5 { try cache.setValue(payload(index, size: 100), forKey: "k\(index)") }
        try cache.removeValue(forKey: "k2")
        try cache.removeValue(forKey: "never stored")
        #expect(try cache.value(forKey: "k2") == nil && cache.statistics.count == 4)
        #expect(!Fixture.entryFiles(directory).contains(DiskCache.entryFileName(forKey: "k2")))
        try cache.removeAll()
        #expect(cache.statistics.count == 0 && cache.statistics.totalBytes == 0 && Fixture.entryFiles(directory).isEmpty)
        try cache.setValue(payload(9, size: 100), forKey: "after")
        #expect(try cache.value(forKey: "after") == payload(9, size: 100))
    }
}

/// Reads into memory the caller counts: the seam a server's memory budget charges through.
@Suite("Disk cache: read memory")
struct DiskCacheReadMemoryTests {
    /// Counts what it hands out and takes back, and refuses beyond `room` bytes at once.
    final class CountingMemory: ReadMemory, @unchecked Sendable {
        private let lock = NSLock()
        private let room: Int
        private var held = 0
        private(set) var buffers: [UnsafeMutableRawPointer] = []
        init(room: Int) { self.room = room }

        func allocate(_ bytes: Int) -> ReadBuffer? {
            lock.lock()
            defer { lock.unlock() }
            guard held + bytes <= room, let pointer = malloc(bytes) else { return nil }
            held += bytes
            buffers.append(pointer)
            return ReadBuffer(pointer: pointer) { [self] pointer in
                free(pointer)
                lock.withLock { held -= bytes }
            }
        }

        var bytesHeld: Int { lock.withLock { held } }
    }

    @Test("an entry is read into one buffer from the caller's memory, and its bytes are that buffer: no copy, freed with them")
    func oneBuffer() throws {
        let directory = try TemporaryDirectory()
        let cache = try DiskCacheFixture.open(directory)
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try cache.setValue(bytes, forKey: "k", metadata: DiskCacheMetadata(contentType: "image/png", etag: "\"e\""))
        let memory = CountingMemory(room: 1 << 20)
        var entry = try #require(try cache.entry(forKey: "k", memory: memory))
        #expect(entry.data == bytes && entry.metadata.etag == "\"e\"")
        #expect(memory.buffers.count == 1 && memory.bytesHeld > bytes.count && memory.bytesHeld < bytes.count + 1024)
        let address = entry.data.withUnsafeBytes { $0.baseAddress }
        #expect(address == UnsafeRawPointer(memory.buffers[0]), "the entry's bytes were copied out of the read buffer")
        entry = DiskCacheEntry(key: "", data: Data(), metadata: DiskCacheMetadata())
        #expect(memory.bytesHeld == 0, "the buffer went with the bytes")
    }

    @Test("with no room, the read is refused before it starts (noMemory), the entry stays, and it counts as a miss")
    func refused() throws {
        let directory = try TemporaryDirectory()
        let cache = try DiskCacheFixture.open(directory)
        try cache.setValue(Data(repeating: 1, count: 100_000), forKey: "k")
        let misses = cache.statistics.counters.misses
        #expect(throws: DiskCacheError.noMemory(bytes: try #require(cache.storedSize(forKey: "k")))) {
            _ = try cache.entry(forKey: "k", memory: CountingMemory(room: 50_000))
        }
        #expect(cache.statistics.counters.misses == misses + 1 && cache.statistics.count == 1)
        #expect(try cache.entry(forKey: "k")?.data.count == 100_000)
    }
}
