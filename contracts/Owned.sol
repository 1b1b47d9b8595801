// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Owned
/// @notice Minimal single-owner access control. The deployer (msg.sender) becomes the owner.
abstract contract Owned {
    /// @notice Address allowed to call `onlyOwner` functions.
    address public owner;

    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    constructor() {
        owner = msg.sender;
        emit OwnershipTransferred(address(0), msg.sender);
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "Owned: caller is not the owner");
        _;
    }

    /// @notice Hands ownership to `newOwner`.
    /// @param newOwner The new owner; must not be the zero address.
    function transferOwnership(address newOwner) external onlyOwner {
        require(newOwner != address(0), "Owned: new owner is the zero address");
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }
}

/// @title ReentrancyGuard
/// @notice Blocks re-entering any `nonReentrant` function of the same contract.
abstract contract ReentrancyGuard {
    uint256 private _entered = 1;

    modifier nonReentrant() {
        require(_entered == 1, "ReentrancyGuard: reentrant call");
        _entered = 2;
        _;
        _entered = 1;
    }
}
