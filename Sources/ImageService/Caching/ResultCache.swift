import Foundation
import ImageCodec
import ImagePipeline
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
    /// Reads of one key from disk at once are one read: its buffer, charged once, is what every
    /// request waiting for it answers with (24 clients of a 48 MB result hold 48 MB, not 1.1 GB).
    private let diskReads = RenderCoalescer<RenderedImage?>()

    init(
        memoryLimit: Int, minimumUses: Int = 1, disk: DiskCache?, lifetime: TimeInterval, onDiskError: @escaping @Sendable () -> Void
    ) {
        memory = MemoryCache(configuration: MemoryCacheConfiguration(costLimit: memoryLimit, minimumUses: minimumUses))
        self.disk = disk.map { DiskCacheQueue(disk: $0, onError: onDiskError) }
        self.lifetime = lifetime
    }

    /// The result for `key` and the layer that had it. A disk hit is read into memory charged
    /// to `ledger` (the request's, or that of the first of the requests reading it at once),
    /// before a byte is read and for as long as the bytes live, and offered to the memory
    /// cache; `.memoryFull` when the ledger's budget has no room for it.
    func value(forKey key: String, ledger: MemoryLedger) async -> Result<(RenderedImage, Layer)?, ServiceError> {
        if let image = memory.value(forKey: key) { return .success((image, .memory)) }
        guard let disk else { return .success(nil) }
        let read = await diskReads.result(for: key) { [memory] () -> Result<RenderedImage?, ServiceError> in
            let entry: DiskCacheEntry?
            do throws(DiskCacheError) {
                entry = try await disk.entry(forKey: key, memory: ChargedReadMemory(ledger: ledger))
            } catch {
                return .failure(.memoryFull)
            }
            guard let entry, let contentType = entry.metadata.contentType, let etag = entry.metadata.etag,
                (entry.metadata.expires ?? .distantPast) > Date()
            else { return .success(nil) }
            let metadata = entry.metadata
            let image = RenderedImage(
                body: entry.data, contentType: contentType, etag: etag, lastModified: metadata.lastModified,
                sourceHasAlpha: metadata.fields[Self.alphaField] == "1", timing: PhaseTiming())
            memory.setValue(image, forKey: key, cost: Self.cost(of: image, key: key), timeToLive: metadata.expires.map { $0.timeIntervalSinceNow })
            return .success(image)
        }
        return read.map { $0.map { ($0, .disk) } }
    }

    /// The result for `key` if memory has it (no I/O).
    func memoryValue(forKey key: String) -> RenderedImage? {
        memory.value(forKey: key)
    }

    /// Keeps `image` in memory now and queues writing its bytes (shared, not copied) to disk.
    func store(_ image: RenderedImage, forKey key: String) {
        memory.setValue(image, forKey: key, cost: Self.cost(of: image, key: key), timeToLive: lifetime)
        disk?.store(
            image.body,
            metadata: DiskCacheMetadata(
                contentType: image.contentType, etag: image.etag, lastModified: image.lastModified,
                expires: Date(timeIntervalSinceNow: lifetime),
                fields: [Self.alphaField: image.sourceHasAlpha ? "1" : "0"]),
            forKey: key)
    }

    /// What an entry holds: its body (an encoder's output, cut to its size, or a file read
    /// whole), its key (up to the 8 KiB a path may be: a 69-byte result behind a long URL was
    /// charged for its body alone, a seventh of what it held), its strings, and the entry's own
    /// bookkeeping.
    static func cost(of image: RenderedImage, key: String) -> Int {
        image.body.count + key.utf8.count + image.contentType.utf8.count + image.etag.utf8.count
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
