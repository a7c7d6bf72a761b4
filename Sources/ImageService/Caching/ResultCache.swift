import Foundation
import NIOCore
import ImageCache

/// Finished thumbnails by result key (canonical options + source URL + output format): in
/// memory, and on disk when the service has a cache directory. A hit is answered without
/// touching the source.
///
/// Entries live as long as the `Cache-Control: max-age` the service promises for them: an
/// HTTP cache in front may serve a result that long, so the service may too.
final class ResultCache: Sendable {
    enum Layer: String, Sendable {
        case memory = "result-memory"
        case disk = "result-disk"
    }

    private static let alphaField = "source-alpha"
    private let memory: MemoryCache<String, RenderedImage>
    private let disk: DiskCacheQueue?
    private let lifetime: TimeInterval

    init(
        memoryLimit: Int, minimumUses: Int = 1, disk: DiskCache?, lifetime: TimeInterval, onDiskError: @escaping @Sendable () -> Void
    ) {
        memory = MemoryCache(configuration: MemoryCacheConfiguration(costLimit: memoryLimit, minimumUses: minimumUses))
        self.disk = disk.map { DiskCacheQueue(disk: $0, onError: onDiskError) }
        self.lifetime = lifetime
    }

    /// The result for `key` and the layer that had it. A disk hit is copied into memory.
    func value(forKey key: String) async -> (RenderedImage, Layer)? {
        if let image = memory.value(forKey: key) { return (image, .memory) }
        guard let entry = await disk?.entry(forKey: key) else { return nil }
        let metadata = entry.metadata
        guard let contentType = metadata.contentType, let etag = metadata.etag, (metadata.expires ?? .distantPast) > Date() else { return nil }
        let image = RenderedImage(
            body: ByteBuffer(bytes: entry.data), contentType: contentType, etag: etag, lastModified: metadata.lastModified,
            sourceHasAlpha: metadata.fields[Self.alphaField] == "1", timing: PhaseTiming())
        memory.setValue(image, forKey: key, cost: Self.cost(of: image, key: key), timeToLive: metadata.expires.map { $0.timeIntervalSinceNow })
        return (image, .disk)
    }

    /// The result for `key` if memory has it (no I/O).
    func memoryValue(forKey key: String) -> RenderedImage? {
        memory.value(forKey: key)
    }

    /// Keeps `image` in memory now and queues writing its `encoded` bytes to disk.
    func store(_ image: RenderedImage, encoded: Data, forKey key: String) {
        memory.setValue(image, forKey: key, cost: Self.cost(of: image, key: key), timeToLive: lifetime)
        disk?.store(
            encoded,
            metadata: DiskCacheMetadata(
                contentType: image.contentType, etag: image.etag, lastModified: image.lastModified,
                expires: Date(timeIntervalSinceNow: lifetime),
                fields: [Self.alphaField: image.sourceHasAlpha ? "1" : "0"]),
            forKey: key)
    }

    /// What an entry holds: its body's storage (NIO allocates a buffer's capacity rounded up to
    /// a power of two, so a 17 KB result holds 32 KiB: charged for its readable bytes, the
    /// caches held up to twice their limit), its key (up to the 8 KiB a path may be: a 69-byte
    /// result behind a long URL was charged for its body alone, a seventh of what it held), its
    /// strings, and the entry's own bookkeeping.
    static func cost(of image: RenderedImage, key: String) -> Int {
        image.body.capacity + key.utf8.count + image.contentType.utf8.count + image.etag.utf8.count
            + (image.lastModified?.utf8.count ?? 0) + entryOverhead
    }

    /// The memory cache's node, the image's fields and the dictionary slot, rounded up.
    static let entryOverhead = 256

    /// Waits for queued disk writes (a clean shutdown, tests).
    func flush() async {
        await disk?.flush()
    }

    /// Entries in memory and on disk now.
    var counts: (memory: Int, disk: Int) {
        (memory.statistics.count, disk?.disk.statistics.count ?? 0)
    }
}
