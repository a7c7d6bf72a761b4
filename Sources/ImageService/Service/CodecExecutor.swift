import Dispatch

/// Where renders decode and encode: dispatch's threads, not the cooperative pool's.
///
/// A decode and its encode block their thread for up to a second, and the cooperative pool has
/// one thread a core, shared by every request's async code. Running them as a task executor
/// (rather than on a dispatch queue behind a continuation) keeps them inside their request's
/// task, so the codec sees that task's cancellation between rows
/// (`ImageCodecError.checkCancellation()`): a render whose client left or whose deadline passed
/// stops within a few milliseconds and frees its worker.
final class CodecExecutor: TaskExecutor {
    static let shared = CodecExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        DispatchQueue.global(qos: .userInitiated).async {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
