import Foundation
import ImageCodec
import Synchronization

/// The baselines' decoder: full size, or at the cell's size when the strategy downsamples. It
/// decodes on a queue as wide as the engine's default decode limit (one per core), display
/// decodes first, so a baseline is never slower only because it decodes one image at a time
/// (URLSession's delegate queue is serial); counts decodes, the frame thread's included.
final class BaselineDecoder: Sendable {
    let resize: Resize?
    private let count = Atomic<Int>(0)
    private let queue = OperationQueue()

    init(resize: Resize?) {
        self.resize = resize
        queue.maxConcurrentOperationCount = ProcessInfo.processInfo.activeProcessorCount
    }

    /// Decodes here, now: on the frame thread for the strategies that decode at display.
    func decode(_ data: Data) -> Bitmap? {
        count.wrappingAdd(1, ordering: .relaxed)
        return try? ImageDecoder(options: DecodingOptions(resize: resize)).decode(data)
    }

    /// Decodes on the decode queue; `forDisplay` jumps ahead of prefetches. A load cancelled
    /// while its decode waited skips it (nil), as the engine's queued decodes do.
    func decode(_ data: Data, forDisplay: Bool, unless cancellation: DeferredTask,
                completion: @escaping @Sendable (Bitmap?) -> Void) {
        let operation = BlockOperation { [self] in completion(cancellation.isCancelled ? nil : decode(data)) }
        operation.queuePriority = forDisplay ? .high : .low
        queue.addOperation(operation)
    }

    var value: Int { count.load(ordering: .relaxed) }
}
