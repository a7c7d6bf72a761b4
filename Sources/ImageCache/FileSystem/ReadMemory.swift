import Foundation

/// Where the bytes of a file read go: the seam through which a caller that counts its memory
/// (a server's budget) makes every cached file it reads count, from before the read for as
/// long as the bytes live. By default, plain memory.
///
/// The cache reads a file into the buffer whole and hands its entry's bytes out without a copy,
/// so the buffer is the only one the read makes.
public protocol ReadMemory: Sendable {
    /// Memory for `bytes` bytes (more than 0) and what frees it, or nil when the caller has no
    /// room for them: the read then fails with ``DiskCacheError/noMemory(bytes:)`` before the
    /// file is read.
    func allocate(_ bytes: Int) -> ReadBuffer?
}

/// Memory a ``ReadMemory`` gave a read, and how to give it back.
public struct ReadBuffer: @unchecked Sendable {
    // @unchecked: the pointer is the read's alone until it is handed to the `Data` that frees it.
    /// At least the bytes asked for.
    public let pointer: UnsafeMutableRawPointer
    /// Frees the memory (and releases whatever counted it); called once, when the last `Data`
    /// over it goes.
    public let free: @Sendable (UnsafeMutableRawPointer) -> Void

    /// A buffer at `pointer`, freed by `free`.
    public init(pointer: UnsafeMutableRawPointer, free: @escaping @Sendable (UnsafeMutableRawPointer) -> Void) {
        self.pointer = pointer
        self.free = free
    }

    /// The first `count` bytes as `Data` that frees the buffer when it goes.
    func data(count: Int) -> Data {
        let free = self.free
        return Data(bytesNoCopy: pointer, count: count, deallocator: .custom { pointer, _ in free(pointer) })
    }
}

/// Plain `malloc`ed memory, counted by nobody: what reads use unless told otherwise.
public struct PlainReadMemory: ReadMemory {
    /// Plain memory.
    public init() {}

    public func allocate(_ bytes: Int) -> ReadBuffer? {
        malloc(max(bytes, 1)).map { ReadBuffer(pointer: $0, free: { Foundation.free($0) }) }
    }
}
