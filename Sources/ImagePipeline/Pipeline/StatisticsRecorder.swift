import Synchronization

/// The pipeline's counters, updated from every task. Atomics, not a lock: a memory hit counts
/// itself, and a lock shared by every hit on every thread would cost more than the hit.
final class StatisticsRecorder: Sendable {
    /// The counters, each with the field of `ImagePipelineStatistics` it fills: the one list.
    enum Counter: Int, CaseIterable {
        case memoryHits, diskHits, thumbnailDiskHits, networkRequests, conditionalRequests, notModifiedResponses, downloads,
            bytesDownloaded, decodes, coalescedRequests, sharedDownloads, cancelledRequests, cancelledDownloads, failures, diskErrors,
            droppedDiskWrites

        var field: WritableKeyPath<ImagePipelineStatistics, Int> {
            switch self {
            case .memoryHits: \.memoryHits
            case .diskHits: \.diskHits
            case .thumbnailDiskHits: \.thumbnailDiskHits
            case .networkRequests: \.networkRequests
            case .conditionalRequests: \.conditionalRequests
            case .notModifiedResponses: \.notModifiedResponses
            case .downloads: \.downloads
            case .bytesDownloaded: \.bytesDownloaded
            case .decodes: \.decodes
            case .coalescedRequests: \.coalescedRequests
            case .sharedDownloads: \.sharedDownloads
            case .cancelledRequests: \.cancelledRequests
            case .cancelledDownloads: \.cancelledDownloads
            case .failures: \.failures
            case .diskErrors: \.diskErrors
            case .droppedDiskWrites: \.droppedDiskWrites
            }
        }
    }

    private let counters: InlineArray<16, Atomic<Int>> = InlineArray { _ in Atomic(0) }

    init() {
        precondition(Counter.allCases.count == counters.count, "one atomic per counter")
    }

    func add(_ counter: Counter, _ amount: Int = 1) {
        counters[counter.rawValue].wrappingAdd(amount, ordering: .relaxed)
    }

    var snapshot: ImagePipelineStatistics {
        var statistics = ImagePipelineStatistics()
        for counter in Counter.allCases { statistics[keyPath: counter.field] = counters[counter.rawValue].load(ordering: .relaxed) }
        return statistics
    }
}
