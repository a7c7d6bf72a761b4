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
