#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a part could not be added or the body not written.
public enum MultipartFormDataError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A boundary given to ``MultipartFormData/init(boundary:)`` that RFC 2046 does not allow.
    case invalidBoundary(String)
    /// The part named `name` contains the boundary, which would cut it short for the receiver.
    case boundaryInPart(name: String)
    /// A content type that is empty or holds a control or non-ASCII character (a CR or LF
    /// would let a value inject header lines).
    case invalidContentType(String)
    /// Writing the body to `path` failed with this `errno`.
    case io(path: String, errno: Int32)

    public var description: String {
        switch self {
        case .invalidBoundary(let boundary):
            "invalid multipart boundary \"\(boundary)\": need 1-70 letters, digits or '()+_,-./:=? , not ending in a space"
        case .boundaryInPart(let name): "part \"\(name)\" contains the multipart boundary"
        case .invalidContentType(let value): "invalid content type \"\(value)\""
        case .io(let path, let code): "\(path): \(String(cString: strerror(code)))"
        }
    }
}
