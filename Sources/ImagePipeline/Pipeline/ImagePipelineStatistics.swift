import Synchronization

/// What a pipeline has done since it was created, and what its caches hold now.
public struct ImagePipelineStatistics: Sendable, Hashable, Codable {
    /// Images served from the memory cache.
    public var memoryHits = 0
    /// Images whose original bytes came fresh from the disk cache.
    public var diskHits = 0
    /// Images served from a thumbnail stored on disk (`storesThumbnails`).
    public var thumbnailDiskHits = 0
    /// Requests sent to the network (conditional ones included).
    public var networkRequests = 0
    /// Conditional requests (`If-None-Match` / `If-Modified-Since`).
    public var conditionalRequests = 0
    /// 304 answers: cached bytes confirmed without being sent again.
    public var notModifiedResponses = 0
    /// Full bodies received.
    public var downloads = 0
    /// Body bytes received.
    public var bytesDownloaded = 0
    /// Images decoded (from originals, thumbnails, or encoded memory hits).
    public var decodes = 0
    /// Requests that joined an identical request in flight instead of starting their own work.
    public var coalescedRequests = 0
    /// Decodes that shared a download with a request for another size.
    public var sharedDownloads = 0
    /// Requests cancelled by their caller.
    public var cancelledRequests = 0
    /// Downloads stopped because nobody wanted them any more.
    public var cancelledDownloads = 0
    /// Requests that failed (cancellations not counted).
    public var failures = 0
    /// Disk-cache reads or writes that failed (the image was still served from elsewhere).
    public var diskErrors = 0
    /// Memory cache: bytes held.
    public var memoryCost = 0
    /// Memory cache: entries held.
    public var memoryCount = 0
    /// Disk cache: bytes held (0 without one).
    public var diskBytes = 0
    /// Disk cache: entries held (0 without one).
    public var diskCount = 0

    /// Statistics with every counter at zero.
    public init() {}
}

/// The pipeline's counters, updated from every task. Atomics, not a lock: a memory hit counts
/// itself, and a lock shared by every hit on every thread would cost more than the hit.
final class StatisticsRecorder: Sendable {
    enum Counter {
        case memoryHits, diskHits, thumbnailDiskHits, networkRequests, conditionalRequests, notModifiedResponses, downloads, bytesDownloaded, decodes, coalescedRequests, sharedDownloads, cancelledRequests, cancelledDownloads, failures, diskErrors
    }

    private let memoryHits = Atomic<Int>(0)
    private let diskHits = Atomic<Int>(0)
    private let thumbnailDiskHits = Atomic<Int>(0)
    private let networkRequests = Atomic<Int>(0)
    private let conditionalRequests = Atomic<Int>(0)
    private let notModifiedResponses = Atomic<Int>(0)
    private let downloads = Atomic<Int>(0)
    private let bytesDownloaded = Atomic<Int>(0)
    private let decodes = Atomic<Int>(0)
    private let coalescedRequests = Atomic<Int>(0)
    private let sharedDownloads = Atomic<Int>(0)
    private let cancelledRequests = Atomic<Int>(0)
    private let cancelledDownloads = Atomic<Int>(0)
    private let failures = Atomic<Int>(0)
    private let diskErrors = Atomic<Int>(0)

    func add(_ counter: Counter, _ amount: Int = 1) {
        switch counter {
        case .memoryHits: memoryHits.wrappingAdd(amount, ordering: .relaxed)
        case .diskHits: diskHits.wrappingAdd(amount, ordering: .relaxed)
        case .thumbnailDiskHits: thumbnailDiskHits.wrappingAdd(amount, ordering: .relaxed)
        case .networkRequests: networkRequests.wrappingAdd(amount, ordering: .relaxed)
        case .conditionalRequests: conditionalRequests.wrappingAdd(amount, ordering: .relaxed)
        case .notModifiedResponses: notModifiedResponses.wrappingAdd(amount, ordering: .relaxed)
        case .downloads: downloads.wrappingAdd(amount, ordering: .relaxed)
        case .bytesDownloaded: bytesDownloaded.wrappingAdd(amount, ordering: .relaxed)
        case .decodes: decodes.wrappingAdd(amount, ordering: .relaxed)
        case .coalescedRequests: coalescedRequests.wrappingAdd(amount, ordering: .relaxed)
        case .sharedDownloads: sharedDownloads.wrappingAdd(amount, ordering: .relaxed)
        case .cancelledRequests: cancelledRequests.wrappingAdd(amount, ordering: .relaxed)
        case .cancelledDownloads: cancelledDownloads.wrappingAdd(amount, ordering: .relaxed)
        case .failures: failures.wrappingAdd(amount, ordering: .relaxed)
        case .diskErrors: diskErrors.wrappingAdd(amount, ordering: .relaxed)
        }
    }

    var snapshot: ImagePipelineStatistics {
        var statistics = ImagePipelineStatistics()
        statistics.memoryHits = memoryHits.load(ordering: .relaxed)
        statistics.diskHits = diskHits.load(ordering: .relaxed)
        statistics.thumbnailDiskHits = thumbnailDiskHits.load(ordering: .relaxed)
        statistics.networkRequests = networkRequests.load(ordering: .relaxed)
        statistics.conditionalRequests = conditionalRequests.load(ordering: .relaxed)
        statistics.notModifiedResponses = notModifiedResponses.load(ordering: .relaxed)
        statistics.downloads = downloads.load(ordering: .relaxed)
        statistics.bytesDownloaded = bytesDownloaded.load(ordering: .relaxed)
        statistics.decodes = decodes.load(ordering: .relaxed)
        statistics.coalescedRequests = coalescedRequests.load(ordering: .relaxed)
        statistics.sharedDownloads = sharedDownloads.load(ordering: .relaxed)
        statistics.cancelledRequests = cancelledRequests.load(ordering: .relaxed)
        statistics.cancelledDownloads = cancelledDownloads.load(ordering: .relaxed)
        statistics.failures = failures.load(ordering: .relaxed)
        statistics.diskErrors = diskErrors.load(ordering: .relaxed)
        return statistics
    }
}
