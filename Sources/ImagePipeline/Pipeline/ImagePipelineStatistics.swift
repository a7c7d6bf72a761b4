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
    /// Disk writes dropped because the write backlog was full (`maximumPendingDiskWriteBytes`).
    public var droppedDiskWrites = 0
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
