import Foundation
import ImageCache
import TestSupport

/// A clock the test moves by hand.
final class ManualClock: CacheClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date(timeIntervalSince1970: 1_700_000_000)

    var now: Date { lock.withLock { current } }

    func advance(by seconds: TimeInterval) { lock.withLock { current += seconds } }
}

/// Deterministic bytes for cache payloads.
func payload(_ seed: Int, size: Int) -> Data {
    var state = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 | 1
    return Data(
        (0..<size).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        })
}

/// Opening a cache in a test directory, and looking at what is really on disk.
enum DiskCacheFixture {
    static func open(
        _ directory: TemporaryDirectory, limit: Int? = 1 << 30, synchronizes: Bool = false,
        fileSystem: any CacheFileSystem = POSIXFileSystem(), clock: any CacheClock = SystemClock()
    ) throws -> DiskCache {
        try DiskCache(
            directory: directory.url, configuration: DiskCacheConfiguration(sizeLimit: limit, synchronizesWrites: synchronizes),
            fileSystem: fileSystem, clock: clock)
    }

    static func entryFiles(_ directory: TemporaryDirectory) -> [String] { CacheDirectoryContents.entryFiles(directory.url) }

    static func temporaryFiles(_ directory: TemporaryDirectory) -> [String] { CacheDirectoryContents.temporaryFiles(directory.url) }

    static func bytesOnDisk(_ directory: URL) -> Int { CacheDirectoryContents.bytesOnDisk(directory) }

    static func path(of key: String, in directory: TemporaryDirectory) -> String {
        directory.url.path + "/entries/" + DiskCache.entryFileName(forKey: key)
    }
}
