// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20, IERC20, TransferHelper} from "./ERC20.sol";
import {AmmFactory} from "./AmmFactory.sol";
import {AmmPair} from "./AmmPair.sol";
import {IWETH} from "./WETH9.sol";

/// @title SelfFundedToken
/// @notice A token that opens its own AMM pool, funded by whoever deploys it, in its constructor:
/// it mints `supply` into a plain AmmPair against `quote`, adds `quoteAmount` of the deployer's
/// quote and sends the LP tokens to the dead address (locked forever).
///
/// Funding with ETH (quote = WETH): send msg.value == quoteAmount; it is wrapped.
/// Funding with an ERC-20 (or WETH without ETH): two transactions. The constructor pulls the
/// quote with transferFrom, so the spender is this token's own address, which only exists after
/// deployment. The deployer therefore first approves the predicted CREATE address
/// (keccak(rlp(deployer, nonce))[12:], with nonce = the deployer's nonce after the approval),
/// then deploys. Missing ETH, allowance or balance revert with a reason naming the problem.
contract SelfFundedToken is ERC20 {
    /// @notice Receiver of the pool's LP tokens; nobody has its key.
    address public constant LP_LOCK = 0x000000000000000000000000000000000000dEaD;

    address public immutable creator;
    address public immutable pair;
    address public immutable quote;

    event SelfFundedLaunch(
        address indexed creator, address indexed pair, address indexed quote, uint256 quoteAmount, uint256 supply, uint256 liquidity
    );

    /// @param supply Tokens (18 decimals) minted, all into the pool.
    /// @param factory AmmFactory creating the pool.
    /// @param weth WETH address, used when funding with ETH.
    /// @param quote_ Quote asset of the pool.
    /// @param quoteAmount Quote the deployer puts into the pool (opening price = quoteAmount / supply).
    constructor(
        string memory name_,
        string memory symbol_,
        uint256 supply,
        address factory,
        address weth,
        address quote_,
        uint256 quoteAmount
    ) payable ERC20(name_, symbol_, 18) {
        require(supply > 0, "SelfFundedToken: zero supply");
        require(quoteAmount > 0, "SelfFundedToken: zero quote amount");
        address pool = AmmFactory(factory).getPair(address(this), quote_);
        if (pool == address(0)) pool = AmmFactory(factory).createPair(address(this), quote_);
        _fund(weth, quote_, quoteAmount, pool);
        _mint(pool, supply);
        uint256 liquidity = AmmPair(pool).mintFromConstructingToken(supply, LP_LOCK);
        creator = msg.sender;
        pair = pool;
        quote = quote_;
        emit SelfFundedLaunch(msg.sender, pool, quote_, quoteAmount, supply, liquidity);
    }

    function _fund(address weth, address quote_, uint256 quoteAmount, address pool) private {
        if (msg.value > 0) {
            require(quote_ == weth, "SelfFundedToken: ETH can only fund a WETH pool");
            require(msg.value == quoteAmount, "SelfFundedToken: msg.value must equal quoteAmount");
            IWETH(weth).deposit{value: msg.value}();
            TransferHelper.safeTransfer(weth, pool, quoteAmount);
            return;
        }
        require(quote_.code.length > 0, "SelfFundedToken: quote asset has no code");
        require(
            IERC20(quote_).allowance(msg.sender, address(this)) >= quoteAmount,
            "SelfFundedToken: quote allowance too low (approve this token's predicted address first, or send ETH for WETH)"
        );
        require(IERC20(quote_).balanceOf(msg.sender) >= quoteAmount, "SelfFundedToken: deployer's quote balance too low");
        TransferHelper.safeTransferFrom(quote_, msg.sender, pool, quoteAmount);
    }
}
