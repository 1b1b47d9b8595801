// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "./ERC20.sol";

/// @title LaunchToken
/// @notice Fixed-supply token created by a launch venue: the whole supply is minted once, to
/// `recipient`, and nobody can mint more.
contract LaunchToken is ERC20 {
    /// @notice The venue contract that created this token.
    address public immutable launcher;

    constructor(string memory name_, string memory symbol_, uint256 supply, address recipient)
        ERC20(name_, symbol_, 18)
    {
        launcher = msg.sender;
        _mint(recipient, supply);
    }
}
