// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "./ERC20.sol";
import {Owned} from "./Owned.sol";

/// @title MockUSDC
/// @notice 6-decimal dollar stablecoin for development; the owner (the dev faucet) mints.
contract MockUSDC is ERC20, Owned {
    constructor() ERC20("USD Coin", "USDC", 6) {}

    /// @notice Mints `amount` (6 decimals) to `to`. Owner only.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
