import Foundation
import Testing
import TestSupport
@testable import ImageCache

/// Whatever a cache directory holds, the cache never reads, writes or deletes outside it,
/// never crashes and never hangs. Each test plants something and checks a bystander directory
/// beside the cache is untouched.
@Suite("Hostile cache directory")
struct HostileDirectoryTests {
    typealias Fixture = DiskCacheFixture

    /// A cache directory with three entries, and an `outside` directory with files the cache
    /// must never touch.
    struct Scene {
        let root: TemporaryDirectory
        var cache: URL { root.url.appendingPathComponent("cache") }
        var outside: URL { root.url.appendingPathComponent("outside") }

        init() throws {
            root = try TemporaryDirectory()
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            try Data("precious".utf8).write(to: outside.appendingPathComponent("keep.txt"))
            // A file with an entry's name and a valid entry inside, as if someone pointed a link at it.
            let decoy = try TemporaryDirectory()
            do { try DiskCache(directory: decoy.url).setValue(payload(99, size: 500), forKey: "k0") }
            try FileManager.default.copyItem(
                atPath: Fixture.path(of: "k0", in: decoy),
                toPath: outside.appendingPathComponent(DiskCache.entryFileName(forKey: "k0")).path)
            let cache = try open()
            for index in 0..<3 { try cache.setValue(payload(index, size: 1000), forKey: "k\(index)") }
        }

        func open(limit: Int? = nil) throws -> DiskCache {
            try DiskCache(directory: cache, configuration: DiskCacheConfiguration(sizeLimit: limit))
        }

        func path(_ relative: String) -> String { cache.path + "/" + relative }

        func entryPath(_ key: String) -> String { path("entries/" + DiskCache.entryFileName(forKey: key)) }

        /// The outside directory exactly as it was made.
        func expectOutsideUntouched(sourceLocation: SourceLocation = #_sourceLocation) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: outside.path))?.sorted()
            #expect(names == ["keep.txt", DiskCache.entryFileName(forKey: "k0")].sorted(), sourceLocation: sourceLocation)
            #expect(
                (try? Data(contentsOf: outside.appendingPathComponent("keep.txt"))) == Data("precious".utf8),
                sourceLocation: sourceLocation)
        }

        func kind(_ relative: String) -> FileAttributeType? {
            (try? FileManager.default.attributesOfItem(atPath: path(relative)))?[.type] as? FileAttributeType
        }

        func replaceWithLink(_ relative: String, to target: URL) throws {
            try FileManager.default.removeItem(atPath: path(relative))
            try FileManager.default.createSymbolicLink(atPath: path(relative), withDestinationPath: (target).path)
        }
    }

    @Test("tmp/ or entries/ replaced by a link to another directory: nothing there is deleted or read", arguments: ["tmp", "entries"])
    func linkedSubdirectory(_ name: String) throws {
        let scene = try Scene()
        try scene.replaceWithLink(name, to: scene.outside)
        let cache = try scene.open()
        scene.expectOutsideUntouched()
        #expect(scene.kind(name) == .typeDirectory)
        #expect(try cache.value(forKey: "k0") == (name == "tmp" ? payload(0, size: 1000) : nil))
        try cache.setValue(payload(5, size: 800), forKey: "new")
        _ = try cache.verify()
        try cache.removeAll()
        scene.expectOutsideUntouched()
    }

    @Test("journal.tmp or journal as a link to a file outside: rewriting the journal never writes through it", arguments: ["journal.tmp", "journal"])
    func linkedJournal(_ name: String) throws {
        let scene = try Scene()
        if name == "journal" { try FileManager.default.removeItem(atPath: scene.path(name)) }
        try FileManager.default.createSymbolicLink(
            atPath: scene.path(name), withDestinationPath: (scene.outside.appendingPathComponent("keep.txt")).path)
        let cache = try scene.open()
        _ = try cache.verify() // rewrites the journal
        try cache.setValue(payload(4, size: 700), forKey: "k4")
        scene.expectOutsideUntouched()
        #expect(scene.kind("journal") == .typeRegular)
        #expect(try cache.value(forKey: "k1") == payload(1, size: 1000), "entries survive a replaced journal")
    }

    @Test("the lock file as a link, FIFO or directory: replaced, never followed, never blocking", arguments: ["link", "fifo", "directory"])
    func hostileLock(_ kind: String) throws {
        let scene = try Scene()
        try FileManager.default.removeItem(atPath: scene.path("lock"))
        switch kind {
        case "link":
            try FileManager.default.createSymbolicLink(
                atPath: scene.path("lock"), withDestinationPath: (scene.outside.appendingPathComponent("keep.txt")).path)
        case "fifo": #expect(mkfifo(scene.path("lock"), 0o644) == 0)
        default: try FileManager.default.createDirectory(atPath: scene.path("lock/inner"), withIntermediateDirectories: true)
        }
        let cache = try scene.open()
        #expect(try cache.value(forKey: "k2") == payload(2, size: 1000))
        #expect(scene.kind("lock") == .typeRegular)
        scene.expectOutsideUntouched()
    }

    @Test("an entry header whose lengths overflow when added reads as damaged (no trap)")
    func overflowingHeader() throws {
        let scene = try Scene()
        var header = Data("IEC1".utf8)
        withUnsafeBytes(of: UInt32.max.littleEndian) { header.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32.max.littleEndian) { header.append(contentsOf: $0) }
        withUnsafeBytes(of: (UInt64(Int.max) - 100).littleEndian) { header.append(contentsOf: $0) }
        header.append(Data(count: 12))
        try header.write(to: URL(fileURLWithPath: scene.entryPath("k1")))
        let cache = try scene.open()
        #expect(try cache.value(forKey: "k1") == nil)
        try header.write(to: URL(fileURLWithPath: scene.entryPath("k2")))
        #expect(try cache.verify().corrupt == [DiskCache.entryFileName(forKey: "k2")])
        #expect(try cache.value(forKey: "k0") == payload(0, size: 1000))
    }

    @Test(
        "a FIFO, directory, link or device-like thing at an entry's path: a miss, removed, and the key can be stored again",
        arguments: ["fifo", "directory", "link"])
    func squattedEntry(_ kind: String) async throws {
        let scene = try Scene()
        let path = scene.entryPath("k0")
        try FileManager.default.removeItem(atPath: path)
        switch kind {
        case "fifo": #expect(mkfifo(path, 0o644) == 0)
        case "directory": try FileManager.default.createDirectory(atPath: path + "/deeper/still", withIntermediateDirectories: true)
        default:
            try FileManager.default.createSymbolicLink(
                atPath: path,
                withDestinationPath:
                    scene.outside.appendingPathComponent(DiskCache.entryFileName(forKey: "k0")).path)
        }
        // Opened without replaying the squatter as an entry; reads and verify must not block.
        let cache = try scene.open()
        let outcome = try await withTimeout(seconds: 10) { () throws -> (Data?, DiskCacheVerificationReport) in
            (try cache.value(forKey: "k0"), try cache.verify())
        }
        #expect(outcome.0 == nil)
        #expect(outcome.1.corrupt.isEmpty && outcome.1.valid == 2)
        try cache.setValue(payload(7, size: 900), forKey: "k0")
        #expect(try cache.value(forKey: "k0") == payload(7, size: 900))
        scene.expectOutsideUntouched()
    }

    @Test("a squatter appearing while the cache is open: get is a miss, put replaces it, verify removes it", arguments: ["fifo", "directory"])
    func squatterWhileOpen(_ kind: String) async throws {
        let scene = try Scene()
        let cache = try scene.open()
        let path = scene.entryPath("k1")
        try FileManager.default.removeItem(atPath: path)
        if kind == "fifo" {
            #expect(mkfifo(path, 0o644) == 0)
        } else {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        let read = try await withTimeout(seconds: 10) { try cache.value(forKey: "k1") }
        #expect(read == nil)
        try cache.setValue(payload(8, size: 600), forKey: "k1")
        #expect(try cache.value(forKey: "k1") == payload(8, size: 600))
        try FileManager.default.createDirectory(atPath: scene.path("entries/stray"), withIntermediateDirectories: false)
        let report = try await withTimeout(seconds: 10) { try cache.verify() }
        #expect(report.orphans == ["entries/stray"])
    }

    @Test("stray subdirectories, links and FIFOs in tmp/ and entries/ do not stop opening and are removed")
    func strays() throws {
        let scene = try Scene()
        try FileManager.default.createDirectory(atPath: scene.path("tmp/dir/sub"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: scene.path("entries/dir"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: scene.path("tmp/link"), withDestinationPath: (scene.outside).path)
        try FileManager.default.createSymbolicLink(atPath: scene.path("entries/link"), withDestinationPath: (scene.outside).path)
        #expect(mkfifo(scene.path("tmp/fifo"), 0o644) == 0)
        // A deep tree: removed as far as the depth bound allows, never recursing without end.
        var deep = scene.path("entries/deep")
        for _ in 0..<50 { deep += "/d" }
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
        let cache = try scene.open()
        #expect(cache.statistics.count == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scene.path("tmp")).isEmpty)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: scene.path("entries"))).subtracting(["deep"]).count == 3)
        scene.expectOutsideUntouched()
        try cache.setValue(payload(3, size: 100), forKey: "k3")
        #expect(try cache.value(forKey: "k3") == payload(3, size: 100))
    }

    @Test("read-only commands never evict: opening without a limit keeps a cache that is over it")
    func openingNeverEvicts() throws {
        let scene = try Scene()
        do { _ = try scene.open(limit: 1_000_000) }
        let size = try scene.open().statistics.totalBytes
        // Shrink the recorded limit behind the cache's back: the next open must not act on it.
        let journal = URL(fileURLWithPath: scene.path("journal"))
        var text = try String(contentsOf: journal, encoding: .utf8)
        text = text.replacingOccurrences(of: "LIMIT 1000000", with: "LIMIT 100")
        try text.write(to: journal, atomically: false, encoding: .utf8)
        let cache = try scene.open()
        #expect(cache.statistics.count == 3 && cache.statistics.totalBytes == size && cache.statistics.sizeLimit == 100)
        #expect(try cache.value(forKey: "k1") == payload(1, size: 1000))
        // Entries larger than the lowered limit are still intact entries, for verify too.
        let report = try cache.verify()
        #expect(report.valid == 3 && report.corrupt.isEmpty, "\(report)")
    }
}

/// Runs `body` on another thread and fails with `TimeoutError` instead of hanging when it
/// takes longer than `seconds` (a hung thread is left behind, the test goes on).
func withTimeout<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    let claimed = NSLock()
    nonisolated(unsafe) var done = false
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let finish: @Sendable (Result<T, any Error>) -> Void = { result in
            let first = claimed.withLock { () -> Bool in
                defer { done = true }
                return !done
            }
            if first { continuation.resume(with: result) }
        }
        Thread.detachNewThread { finish(Result { try body() }) }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { finish(.failure(TimeoutError(seconds: seconds))) }
    }
}

struct TimeoutError: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "did not finish within \(seconds) s (hang)" }
}
