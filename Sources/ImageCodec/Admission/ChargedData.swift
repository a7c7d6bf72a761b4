import Foundation

extension Data {
    /// `count` bytes at `bytes` (malloc'd, handed over) as `Data` without copying, charged to the
    /// current ``MemoryLedger`` until the last `Data` sharing them goes: the bytes are freed and
    /// the charge released together. Outside a ledger, plain adopted bytes. When the ledger's
    /// budget has no room, the bytes are freed and the error thrown.
    ///
    /// For bytes a library or the system made in one go (an encoder's output, a file read);
    /// bytes the engine allocates itself go through `ChargedArray`.
    package static func charged(adopting bytes: UnsafeMutableRawPointer, count: Int) throws(ImageCodecError) -> Data {
        let charge: MemoryCharge?
        do throws(ImageCodecError) {
            charge = try MemoryLedger.current?.charge(count)
        } catch {
            free(bytes)
            throw error
        }
        guard let charge else { return Data(bytesNoCopy: bytes, count: count, deallocator: .free) }
        return Data(
            bytesNoCopy: bytes, count: count,
            deallocator: .custom { pointer, _ in
                free(pointer)
                withExtendedLifetime(charge) {}
            })
    }
}
