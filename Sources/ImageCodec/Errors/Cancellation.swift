import CImageCodecShim

extension ImageCodecError {
    /// Rows between two looks at the task's cancellation: a look costs a few nanoseconds, a
    /// row of a large image microseconds, so a decode or encode stops within a few
    /// milliseconds of its task being cancelled.
    static let rowsBetweenCancellationChecks = 16

    /// Throws ``cancelled`` when the current task is cancelled.
    ///
    /// Decoders and encoders call it between rows (every
    /// `rowsBetweenCancellationChecks`): work run inside a task — `serve`'s renders run inside
    /// their request's — stops soon after the task is cancelled (its client left, its deadline
    /// passed) instead of running to the end on a thread nobody waits for. Called outside any
    /// task (a plain thread, a dispatch queue), it never throws.
    public static func checkCancellation() throws(ImageCodecError) {
        if Task.isCancelled { throw .cancelled }
    }

    /// The same look for work that is one library call long — a progressive JPEG's scans, a
    /// whole libjpeg, libpng or libwebp encode, a WebP decode: the C shim asks it at the
    /// library's own progress points (see `iec_stop_probe`) and the call ends with
    /// `IEC_CANCELLED`, which becomes ``cancelled``. It runs on the calling thread, inside the
    /// calling task, so it reads that task's flag.
    static let stopProbe: iec_stop_probe = { Task.isCancelled ? 1 : 0 }
}

/// The one stop of every loop whose cost grows with its input (pixels, rows, candidates,
/// frames): it counts the work done and looks at the task's cancellation each time another
/// ``ImageCodecError/workBetweenCancellationChecks`` units have passed, so the loop stops within
/// a fraction of a millisecond of its request being cancelled, whatever the loop is.
///
/// ```swift
/// var checkpoint = CancellationCheckpoint()
/// for y in 0..<height {
///     try checkpoint.advance(by: width)   // a row's pixels
///     ...
/// }
/// ```
package struct CancellationCheckpoint {
    private var pending = 0

    /// A checkpoint that has counted nothing yet.
    package init() {}

    /// Counts `work` more units done; throws ``ImageCodecError/cancelled`` when the task is
    /// cancelled and enough has been done since the last look.
    @inline(__always)
    package mutating func advance(by work: Int) throws(ImageCodecError) {
        pending &+= max(1, work)
        guard pending >= ImageCodecError.workBetweenCancellationChecks else { return }
        pending = 0
        try ImageCodecError.checkCancellation()
    }
}

extension ImageCodecError {
    /// Units of work (pixels, or pixel-sized steps) between two looks at cancellation in a
    /// ``CancellationCheckpoint``: 64 Ki pixels is well under a millisecond of any loop here,
    /// and a look costs a few nanoseconds.
    package static let workBetweenCancellationChecks = 1 << 16
}
