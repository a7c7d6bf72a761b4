#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ImageCodec
import ImagePipeline

/// The body of one download, in a buffer of its own whose bytes are reserved in the memory
/// budget (within the host's share) as they arrive, and stay reserved until the `Data` made
/// from it (`data()`) is freed — wherever it is by then: a render waiting for a worker, the
/// pipeline's memory cache. A body the budget cannot hold now fails the download with
/// `.overloaded` (answered 429).
///
/// What a `Content-Length` announces is taken as a hint, never as a reservation: the buffer
/// starts at `firstStep` at most and doubles as bytes come, so a server that announces 64 MiB
/// and sends a byte a second holds 256 KiB, not 64 MiB. Its pages come from the kernel
/// (`PageMemory`): growing moves them rather than copying, and what is freed is gone from the
/// process at once, not kept in the allocator's free lists.
final class SourceBuffer {
    /// The most reserved before a byte arrives, whatever the length announced.
    static let firstStep = 256 << 10
    private var pointer: UnsafeMutableRawPointer?
    private var capacity = 0
    /// Bytes received.
    private(set) var count = 0
    /// Bytes reserved in `memory` (the capacity).
    private var reserved = 0
    private let memory: HostMemoryShare?
    private let host: String

    /// Largest body accepted: growth never reserves beyond it.
    private let maximum: Int
    /// The length the response announced (0: none).
    private let announced: Int

    /// A buffer for `capacity` bytes (the announced length; 0 when unknown) of a body of at most
    /// `maximum`.
    init(capacity: Int, maximum: Int, memory: HostMemoryShare?, host: String) throws(DataLoadingError) {
        self.memory = memory
        self.host = host
        self.maximum = max(1, maximum)
        announced = max(0, capacity)
        try grow(to: min(max(capacity, 1), Self.firstStep, self.maximum))
    }

    deinit {
        if let pointer { PageMemory.free(pointer, capacity) }
        memory?.release(reserved, for: host)
    }

    /// Appends `bytes`, growing the buffer (and its reservation) when needed: by doubling (16
    /// MiB at most a step), but never past the announced length while the body keeps within
    /// it, so an honest body is reserved once at its size, not at the next power of two.
    func append(_ bytes: UnsafeRawBufferPointer) throws(DataLoadingError) {
        guard !bytes.isEmpty, let base = bytes.baseAddress else { return }
        let needed = count + bytes.count
        if needed > capacity {
            var size = min(max(needed, min(capacity * 2, capacity + (16 << 20)), 64 << 10), max(maximum, needed))
            if announced >= needed { size = min(size, announced) }
            try grow(to: size)
        }
        guard let pointer else { return }
        (pointer + count).copyMemory(from: base, byteCount: bytes.count)
        count += bytes.count
    }

    /// The bytes, handed over: the buffer shrinks to them (giving back the rest of its
    /// reservation) and the `Data` frees it, and gives back the reservation, when it goes.
    func data() -> Data {
        guard count > 0, let current = pointer, let base = PageMemory.resize(current, from: capacity, to: count) else { return Data() }
        memory?.release(reserved - count, for: host)
        let (memory, held, host) = (memory, count, host)
        let data = Data(
            bytesNoCopy: base, count: count, // charged: the reservation goes with the bytes
            deallocator: .custom { bytes, _ in
                PageMemory.free(bytes, held)
                memory?.release(held, for: host)
            })
        (pointer, capacity, count, reserved) = (nil, 0, 0, 0)
        return data
    }

    private func grow(to size: Int) throws(DataLoadingError) {
        if let memory, !memory.reserve(size - reserved, for: host) {
            throw .overloaded("no memory left for the source's \(size) bytes")
        }
        guard let grown = pointer.map({ PageMemory.resize($0, from: capacity, to: size) }) ?? PageMemory.allocate(size) else {
            memory?.release(size - reserved, for: host)
            throw .overloaded("cannot allocate \(size) bytes for the source")
        }
        (pointer, capacity, reserved) = (grown, size, size)
    }
}
