import Foundation
import ImageCache

/// Invalidation: when a URL's response may no longer be used (RFC 9111 §4.4: a response that
/// may not be stored, `Vary: *`, the answer to a POST), nothing made from an earlier response
/// may be served either — the original bytes, the decoded images of every size, and the
/// thumbnails stored on disk.
extension ImagePipeline {
    /// Drops what the cache holds for `dataKey`'s URL.
    ///
    /// Decoded images are found by their key's URL (a scan of the image memory cache, which is
    /// why this runs on invalidation only). Stored thumbnails cannot be: their disk keys name
    /// sizes nobody lists, so the URL gets a mark holding the time of the invalidation, and
    /// `isInvalidated(_:for:)` refuses a thumbnail made from a response that arrived before it.
    /// The mark is an empty entry, which the disk queue never drops, and every thumbnail lookup
    /// of the URL uses it, so it outlives in the cache's LRU order any thumbnail it refuses.
    ///
    /// A job that fetched the original before the invalidation and decodes it after must not
    /// put the old image back: the time is kept in memory too (`invalidations`), and
    /// `madeBeforeInvalidation(_:for:)` stops that store.
    func invalidate(_ dataKey: String) {
        let now = configuration.clock.now
        invalidations.setValue(now, forKey: dataKey, cost: 1)
        removeOriginal(dataKey)
        imageMemory?.removeValues { $0.dataKey == dataKey }
        guard configuration.storesThumbnails, let diskQueue else { return }
        // The time goes into the mark as any stored response's arrival does.
        diskQueue.store(Data(), metadata: HTTPCacheInfo(expires: nil, received: now).metadata, forKey: Self.invalidationKey(dataKey))
    }

    /// Whether a stored thumbnail of `dataKey`'s URL, with `info`, was made from a response
    /// that arrived before the URL's last invalidation (or at an unknown time after one).
    func isInvalidated(_ info: HTTPCacheInfo, for dataKey: String) async -> Bool {
        guard let diskQueue, let mark = await diskQueue.entry(forKey: Self.invalidationKey(dataKey)) else { return false }
        return Self.predates(info, HTTPCacheInfo(mark.metadata).received)
    }

    /// Whether an image made from a response with `info` predates `dataKey`'s last
    /// invalidation in this process: it may be delivered to the request that made it, not
    /// stored for others.
    func madeBeforeInvalidation(_ info: HTTPCacheInfo, for dataKey: String) -> Bool {
        guard let at = invalidations.value(forKey: dataKey) else { return false }
        return Self.predates(info, at)
    }

    /// Whether the response `info` describes did not arrive after an invalidation at `at`
    /// (unknown times count as before). Not after it: an equal time cannot say which came
    /// first, and an image refused costs one decode of the original, one kept wrongly an
    /// outdated image.
    private static func predates(_ info: HTTPCacheInfo, _ at: Date?) -> Bool {
        guard let at, let received = info.received else { return true }
        return received <= at
    }

    private static func invalidationKey(_ dataKey: String) -> String { dataKey + "#invalidated" }
}
