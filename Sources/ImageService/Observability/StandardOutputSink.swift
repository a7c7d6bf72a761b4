#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Locking

/// Where the log handlers' lines go: a bounded buffer that a thread of its own writes to
/// standard output. A request never waits for the log: when the pipe stalls (a log shipper that
/// stopped reading) lines beyond `capacity` bytes are dropped and counted, instead of blocking
/// the cooperative pool that every request shares.
final class StandardOutputSink: @unchecked Sendable {
    // @unchecked: `pending`, `pendingBytes`, `dropped` and `queued` are only touched while `lock`
    // is held; `finished` only while `progress` is.
    static let shared = StandardOutputSink(descriptor: STDOUT_FILENO)

    /// Bytes waiting to be written before lines are dropped.
    let capacity: Int
    private let descriptor: Int32
    private let lock = Lock()
    private let ready = DispatchSemaphore(value: 0)
    private var pending: [Data] = []
    private var pendingBytes = 0
    private var dropped = 0
    private var stopped = false
    /// Lines accepted since the start, and lines the thread is done with (written, or given up
    /// on when the output went away): `flush` waits for the second to reach the first.
    private var queued = 0
    private var finished = 0
    private let progress = NSCondition()

    init(descriptor: Int32, capacity: Int = 4 << 20) {
        self.descriptor = descriptor
        self.capacity = capacity
        // The thread keeps the sink until `close()` (the shared one: for the whole process).
        let thread = Thread { self.drain() }
        thread.name = "image-engine.log"
        thread.start()
    }

    /// Queues `line`; never blocks.
    func write(_ line: Data) {
        let accepted = lock.withLock { () -> Bool in
            guard pendingBytes + line.count <= capacity else {
                dropped += 1
                return false
            }
            pending.append(line)
            pendingBytes += line.count
            queued += 1
            return true
        }
        if accepted { ready.signal() }
    }

    /// Lines dropped so far because the output did not keep up.
    var droppedLines: Int { lock.withLock { dropped } }

    /// Waits until every line queued so far is written, or `timeout` has passed (an output that
    /// stalls must not keep a stopping process alive); tells which. A process calls it before it
    /// exits: the lines of its last requests are still in the buffer when its work is done.
    @discardableResult
    func flush(timeout: Duration) -> Bool {
        let target = lock.withLock { queued }
        let deadline = Date(timeIntervalSinceNow: timeout.milliseconds / 1000)
        progress.lock()
        defer { progress.unlock() }
        while finished < target {
            if !progress.wait(until: deadline) { return finished >= target }
        }
        return true
    }

    /// Stops the writing thread once what is queued is written (or the output is gone).
    func close() {
        lock.withLock { stopped = true }
        ready.signal()
    }

    private func drain() {
        // A reader that went away must not kill the process: with SIGPIPE blocked on this
        // thread, a write to a closed pipe fails with EPIPE instead.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
        while true {
            ready.wait()
            let (batch, stop) = lock.withLock { () -> ([Data], Bool) in
                defer { (pending, pendingBytes) = ([], 0) }
                return (pending, stopped)
            }
            defer {
                progress.lock()
                finished += batch.count
                progress.broadcast()
                progress.unlock()
            }
            for line in batch {
                line.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset < bytes.count, let base = bytes.baseAddress {
                        let written = systemWrite(descriptor, base + offset, bytes.count - offset)
                        if written > 0 {
                            offset += written
                        } else if written < 0, errno == EINTR {
                            continue
                        } else {
                            return
                        }
                    }
                }
            }
            if stop { return }
        }
    }
}

#if canImport(Glibc)
private let systemWrite = Glibc.write
#else
private let systemWrite = Darwin.write
#endif

/// The standard output that ``JSONLogHandler`` and ``LineLogHandler`` write to from a thread of
/// their own.
public enum LogOutput {
    /// Waits until every line logged so far is written to standard output, or `timeout` has
    /// passed; `false` when the output did not take them in time. Call it before the process
    /// exits, or the lines of its last requests may be lost.
    @discardableResult
    public static func flush(timeout: Duration = .seconds(2)) -> Bool {
        StandardOutputSink.shared.flush(timeout: timeout)
    }
}
