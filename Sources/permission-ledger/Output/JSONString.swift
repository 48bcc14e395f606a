import ArgumentParser
import Foundation
@_spi(Testing) import PermissionLedger
import PermissionModel

func jsonString(_ s: String) -> String {
    let data = try! JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes])
    return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
}
